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
//	Ready    True   Ready              Applied, and every object is ready on every cluster
//	         False  NotReady           some objects are not ready yet (the message names one)
//	         False  NotApplied         Applied is not True
const (
	PropagationApplied = "Applied"
	PropagationReady   = "Ready"

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
)

// Ownership markers on delivered objects. Only objects carrying LabelManagedBy and Flotilla's
// owner label are ever updated or pruned by Flotilla.
const (
	// LabelManagedBy marks every object Flotilla delivered; spoke caches hold only these.
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
	// AnnotationClusters on a transparently propagated hub object lists the clusters it was
	// delivered to, so they can be cleaned up after a restart. Not an API contract.
	AnnotationClusters = "flotilla.dev/clusters"
	// FinalizerCleanup holds a Propagation until its objects are removed from the spokes.
	FinalizerCleanup = "flotilla.dev/cleanup"
)
