package v1alpha1

// The condition tree of a Propagation or ClusterPropagation, written down once.
//
//	Applied  True   Applied            every chosen cluster has every object in its desired state
//	         False  Progressing        deliveries are under way
//	         False  ApplyFailed        some objects failed on some clusters (clusterResults says which)
//	         False  Conflict           an object exists on a cluster and is not Flotilla's
//	         False  PlacementNotFound  placementRef names no Placement
//	         False  NoClusters         the Placement chooses no cluster
//	         False  NothingSelected    the selectors match nothing; nothing is pruned because of it
//	         False  InvalidSpec        a selector or manifest is malformed (the message names it)
//	         False  KindUnavailable    the hub cannot list and watch a selected kind now (its API is
//	                                   down, or the hub controller may not); retried every minute
//	         False  PruneBlocked       a change would delete more than the prune budget allows
//	Ready    True   Ready              Applied, and every object is ready on every cluster
//	         False  NotReady           some objects are not ready yet (the message names one)
//	         False  NotApplied         Applied is not True
//	Reconciling True  (Applied's or Ready's reason)  present only while objects are on their way
//	                                   or not Ready yet (kstatus InProgress; package statusconds)
//	Stalled  True   (Applied's or Moving's reason)  present only while InvalidSpec,
//	                                   PlacementNotFound, Conflict, ApplyFailed, KindUnavailable,
//	                                   PruneBlocked or MoveStalled stops the delivery (kstatus Failed)
//	Drifted  True   Drifted            objects on clusters differ from what Flotilla applied (Report,
//	                                   Ignore or ApplyOnce leaves them; clusterResults lists them)
//	         False  InSync             no drift is known
//	Fighting True   Fighting           someone on a cluster changes objects back after every
//	                                   correction (three in a row, each undone within a minute);
//	                                   Flotilla corrects them only when their backoff ends (up to
//	                                   5 minutes) or at once when they change on the hub; the
//	                                   message names the cluster, object, fields and field manager
//	         False  NoFight            every correction holds
//	PruneBlocked True PruneBlocked     deletions wait for confirmation (the message has the counts
//	                                   and the revision to confirm); False otherwise
//	Moving   True   MoveInProgress     objects or replicas wait to leave clusters until the
//	                                   others are Ready (or, BreakBeforeMake, to arrive until the
//	                                   others gave theirs up); the message names the clusters
//	         True   MoveStalled        the same for longer than moves.progressDeadline (a
//	                                   Warning Event says so); the move keeps waiting
//	         False  Settled            no move under way
//	ReplicasPlaced                     present only when the Placement divides workloads; the
//	                                   message says per workload where its replicas go, with numbers
//	         True   Placed             every replica has a cluster, within its estimated room
//	         False  InsufficientCapacity  every replica has a cluster, some above a cluster's
//	                                   estimated room (Capacity, Packed): expect Pending pods there
//	         False  SpreadUnsatisfiable  the spread is not met (too few domains, or DoNotSchedule
//	                                   left replicas without a cluster)
//	         False  LimitsExceeded     some replicas have no cluster: every cluster is at its max
//	                                   or its placement limits
const (
	PropagationApplied = "Applied"
	PropagationReady   = "Ready"
	PropagationDrifted = "Drifted"
	// PropagationFighting is True while someone on a cluster undoes Flotilla's corrections.
	PropagationFighting = "Fighting"
	// PropagationPruneBlocked is True while deletions wait for confirmation.
	PropagationPruneBlocked = "PruneBlocked"
	// PropagationReplicasPlaced says whether the replicas of divided workloads all have a
	// cluster; its False reasons are ReasonInsufficientCapacity, ReasonSpreadUnsatisfiable and
	// ReasonLimitsExceeded.
	PropagationReplicasPlaced = "ReplicasPlaced"
	// PropagationMoving is True while a move waits (MoveInProgress, then MoveStalled beyond
	// the Placement's moves.progressDeadline), False (Settled) otherwise.
	PropagationMoving = "Moving"
	// ReasonMoveInProgress: a move waits for clusters to be Ready.
	ReasonMoveInProgress = "MoveInProgress"
	// ReasonSettled: no move under way.
	ReasonSettled = "Settled"
	// ReasonPlaced: every replica of the divided workloads has a cluster within its room.
	ReasonPlaced = "Placed"
	// ReasonInsufficientCapacity: some replicas are placed above a cluster's estimated room.
	ReasonInsufficientCapacity = "InsufficientCapacity"
	// ReasonSpreadUnsatisfiable: a spread constraint is not met.
	ReasonSpreadUnsatisfiable = "SpreadUnsatisfiable"
	// ReasonLimitsExceeded: some replicas have no cluster (every max and placement limit
	// reached).
	ReasonLimitsExceeded = "LimitsExceeded"

	ReasonReady      = "Ready"
	ReasonNotApplied = "NotApplied"
	// ReasonNotReady (shared with Cluster) marks objects that are not ready yet.

	ReasonApplied           = "Applied"
	ReasonProgressing       = "Progressing"
	ReasonApplyFailed       = "ApplyFailed"
	ReasonConflict          = "Conflict"
	ReasonPlacementNotFound = "PlacementNotFound"
	ReasonNoClusters        = "NoClusters"
	ReasonNothingSelected   = "NothingSelected"
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonPruneBlocked      = "PruneBlocked"
	ReasonDrifted           = "Drifted"
	ReasonInSync            = "InSync"
	ReasonFighting          = "Fighting"
	ReasonNoFight           = "NoFight"
	// ReasonMoveStalled says a move has waited longer than the Placement's
	// moves.progressDeadline (the Moving condition; a Warning Event). While it waits within the
	// deadline the reason is ReasonMoveInProgress, on the Moving and the Applied conditions:
	// objects stay on clusters that leave, and replicas on clusters that shrink, until the
	// others are Ready (kstatus, at the generation Flotilla wrote).
	ReasonMoveStalled = "MoveStalled"
	// ReasonReplicasNotPlaced (a Warning Event) says some replicas of a divided workload have
	// no cluster: every chosen cluster is at the maximum its Placement allows.
	ReasonReplicasNotPlaced = "ReplicasNotPlaced"

	// ReasonKindUnavailable holds an owner that selects a kind the hub cannot list and watch
	// now: nothing is delivered or pruned for it until the kind can be read again.
	ReasonKindUnavailable = "KindUnavailable"
	// ReasonPlacementPending says an owner's Placement has not scheduled its latest change
	// yet (its status.observedGeneration lags its generation): what is delivered is kept
	// where it is, and nothing is removed, until it has.
	ReasonPlacementPending = "PlacementPending"
)

// Ownership markers on delivered objects. Only objects carrying LabelManagedBy and Flotilla's
// owner label are ever updated or pruned by Flotilla.
const (
	// LabelManagedBy marked every object Flotilla delivered before the owner label alone did;
	// objects carrying it are still recognized as Flotilla's. No longer written.
	LabelManagedBy = "flotilla.dev/managed-by"
	// ManagedByValue is LabelManagedBy's value.
	ManagedByValue = "flotilla"
	// LabelOwner holds a short hash of the owning Propagation (a label value is at most 63
	// characters); AnnotationOwner names it in full.
	LabelOwner      = "flotilla.dev/owner"
	AnnotationOwner = "flotilla.dev/owner"
	// AnnotationHash is the hash of the desired object last applied. Not an API contract.
	AnnotationHash = "flotilla.dev/hash"
	// LabelPlacement on an ordinary hub object propagates it with the Placement of that name in
	// its namespace (transparent mode).
	LabelPlacement = "flotilla.dev/placement"
	// LabelProtected set to "true" on a hub object keeps its delivered copies on the spokes
	// when the hub object is deleted or stops being selected: Flotilla never deletes them.
	LabelProtected = "flotilla.dev/protected"
	// AnnotationMode on a hub object overrides strategy.mode for that object.
	AnnotationMode = "flotilla.dev/mode"
	// AnnotationDrift on a hub object overrides strategy.drift for that object.
	AnnotationDrift = "flotilla.dev/drift"
	// AnnotationConfirmPrune on a Propagation, set to the revision its PruneBlocked condition
	// names, lets that one revision delete more than the prune budget allows.
	AnnotationConfirmPrune = "flotilla.dev/confirm-prune"
	// AnnotationRevisionPins on a transparent-mode hub object holds clusters at kept revisions
	// of it, as a Propagation's spec.revisionPins does: a comma-separated list of
	// cluster=revision pairs, each revision one of the object's ControllerRevisions (kubectl get
	// controllerrevisions -n <namespace> -l flotilla.dev/owner=<its owner label value>). It
	// stays on the hub: delivered copies do not carry it.
	AnnotationRevisionPins = "flotilla.dev/revision-pins"
	// AnnotationOverrides on a delivered object lists the override rules applied to it.
	AnnotationOverrides = "flotilla.dev/overrides"
	// AnnotationAdopted on an object on a spoke names the owner that adopted it
	// (strategy.conflict: Adopt): the object existed there before Flotilla delivered it, so
	// Flotilla never deletes it; a prune or the owner's removal releases it (takes Flotilla's
	// marks, this one included, off it) and leaves it in place. Flotilla
	// writes it, with a field manager of its own, before it first applies the object; a
	// delivered object may not carry it.
	AnnotationAdopted = "flotilla.dev/adopted"
	// AnnotationShare on a delivered copy of a divided workload that an HPA delivered with it
	// scales is the spec.replicas Flotilla writes there: its share of the division (or what a
	// move holds). While the cluster's copy carries the value Flotilla would write, its
	// spec.replicas belongs to the cluster's HPA: Flotilla neither corrects nor rewrites it,
	// and writes the replicas again only when the value changes.
	AnnotationShare = "flotilla.dev/share"
	// FinalizerCleanup holds a Propagation until its objects are removed from the spokes.
	FinalizerCleanup = "flotilla.dev/cleanup"
)
