package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PlacementSpec says which clusters to place on. A cluster is chosen when it is named in
// clusterNames or matches clusterSelector; with neither set, nothing is chosen (use
// `clusterSelector: {}` for every cluster). A cordoned cluster, or one with a NoSchedule taint
// the placement does not tolerate, is not newly chosen but keeps what it already has; a
// NoExecute taint that is not tolerated removes the cluster.
// +kubebuilder:validation:XValidation:rule="has(self.clusterNames) || has(self.clusterSelector)",message="set clusterNames, clusterSelector, or both"
type PlacementSpec struct {
	// clusterNames lists clusters by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// clusterSelector chooses clusters by their labels; {} chooses every cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// tolerations let the placement choose clusters with matching taints.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// clusterCount chooses at most this many of the eligible clusters (pick N). The choice is
	// sticky: a cluster chosen before stays chosen while it is eligible (a cordoned one
	// included), so adding clusters to the fleet moves nothing; a free place goes to the
	// eligible cluster with the most allocatable CPU (its status.allocatable), then to the one a
	// hash of the Placement and the cluster ranks first (never the name's order). Health alone
	// does not make a cluster ineligible. Unset: every eligible cluster.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	ClusterCount *int32 `json:"clusterCount,omitempty"`

	// overrides change, per cluster, the objects delivered in transparent mode (labelled
	// flotilla.dev/placement with this Placement's name); a Propagation carries its own. Rules
	// apply in order; a rule that fails on a cluster fails that object on that cluster only,
	// naming the rule in a Warning Event on the object, and the last good version stays live
	// there.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Overrides []Override `json:"overrides,omitempty"`

	// replicas divides spec.replicas of the workloads delivered through this Placement
	// (Deployments, StatefulSets and ReplicaSets) over the chosen clusters. Unset: the workloads
	// of Propagations run spec.replicas on every cluster (Duplicate), and transparent-mode
	// workloads are divided evenly (Weighted, every cluster weight 1). A division is sticky: it
	// changes only when the total, a weight, min or max, the chosen clusters, the spread or the
	// labels an entry or the spread reads change; a new total adds or takes away only the difference. A cluster
	// that is to run fewer replicas keeps what it runs until the other clusters running the
	// workload are Ready (make before break).
	// +optional
	Replicas *ReplicaPolicy `json:"replicas,omitempty"`

	// moves says when divided workloads leave a chosen cluster that is not Ready, and when
	// they come back. Unset: health alone moves nothing.
	// +optional
	Moves *MovePolicy `json:"moves,omitempty"`

	// spread balances the replicas of divided workloads across topology domains: the values of
	// a cluster label such as topology.kubernetes.io/region. It does not change which clusters
	// are chosen yet, only how a divided workload's replicas are split over them: the total is
	// split as evenly as possible over the domains (each domain's share within what its
	// clusters' max and placement limits admit), then each domain's part is divided among its
	// clusters by replicas (mode, weights, min, max). Constraints nest in list order (region,
	// then zone within each region). Failed-over and returning clusters form no domain; a
	// cluster whose max is 0 neither. Workloads that are duplicated are not affected.
	// +optional
	// +listType=map
	// +listMapKey=topologyKey
	// +kubebuilder:validation:MaxItems=4
	Spread []SpreadConstraint `json:"spread,omitempty"`

	// tiers order the chosen clusters into groups that are filled in turn: a cluster belongs to
	// the first tier it matches, and clusters matching none form an implicit last tier. A
	// divided workload's replicas go to the first tier until its clusters are at their max,
	// placement limits or (Capacity, Packed) room, and only then overflow to the next; a later
	// tier's clusters still get the owner's other objects and run the workload at replicas 0
	// (a warm standby). With clusterCount, clusters of earlier tiers are chosen first. Each
	// decision names its cluster's tier. Unset: one tier.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Tiers []ClusterTier `json:"tiers,omitempty"`

	// rollout rolls each new revision of the owners that use this Placement out stage by
	// stage, cluster by cluster (Propagations, ClusterPropagations and transparent-mode
	// objects; APIPropagations deliver every revision at once for now). Unset: a new revision
	// goes to every chosen cluster at once.
	// +optional
	Rollout *RolloutPolicy `json:"rollout,omitempty"`
}

// ClusterTier is one group of clusters in the order spec.tiers fills them.
type ClusterTier struct {
	// name identifies the tier; decisions show it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusterNames lists clusters of the tier by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// clusterSelector chooses clusters of the tier by their labels; {} matches every cluster.
	// With neither field set the tier matches none.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
}

// UnsatisfiableAction says what a spread constraint does when a domain cannot hold its part.
// +kubebuilder:validation:Enum=ScheduleAnyway;DoNotSchedule
type UnsatisfiableAction string

const (
	// ScheduleAnyway places what a domain cannot hold in the other domains, and says so.
	ScheduleAnyway UnsatisfiableAction = "ScheduleAnyway"
	// DoNotSchedule keeps the spread: what would exceed maxSkew stays unplaced.
	DoNotSchedule UnsatisfiableAction = "DoNotSchedule"
)

// SpreadConstraint balances divided replicas over the values of one cluster label.
type SpreadConstraint struct {
	// topologyKey is the cluster label whose values are the domains, for example
	// topology.kubernetes.io/region. A cluster without it forms a domain of its own under
	// ScheduleAnyway, and gets no replicas under DoNotSchedule (the Placement's message names it).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	TopologyKey string `json:"topologyKey"`

	// maxSkew is the largest difference in replicas between two domains that DoNotSchedule
	// accepts when a domain is at its cap (max and placement limits): the others hold at most
	// that many more, and the rest stays unplaced. With room everywhere, domains differ by at
	// most one replica (minimums apart), whatever maxSkew says. Under ScheduleAnyway a larger
	// skew is reported, never enforced. Default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MaxSkew *int32 `json:"maxSkew,omitempty"`

	// minDomains is how many domains there must be at least; with fewer, the division reports
	// SpreadUnsatisfiable with the numbers, and DoNotSchedule places at most maxSkew replicas
	// per domain (as if the missing domains held none). Default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MinDomains *int32 `json:"minDomains,omitempty"`

	// whenUnsatisfiable is ScheduleAnyway (default: what a domain cannot hold, within its
	// clusters' estimated room or their caps, goes to the other domains, and the message says
	// so) or DoNotSchedule (the spread is kept even when that leaves replicas unplaced, during
	// failover too: a short domain is filled beyond its clusters' estimated room, expect
	// Pending pods, up to their caps; what would exceed maxSkew is not placed, reason
	// SpreadUnsatisfiable).
	// +optional
	// +kubebuilder:default=ScheduleAnyway
	WhenUnsatisfiable UnsatisfiableAction `json:"whenUnsatisfiable,omitempty"`
}

// FailbackPolicy says when a failed-over cluster gets its share back.
// +kubebuilder:validation:Enum=Automatic;Manual
type FailbackPolicy string

const (
	// FailbackAutomatic gives the share back once the cluster has been Ready for failbackAfter.
	FailbackAutomatic FailbackPolicy = "Automatic"
	// FailbackManual gives it back when the Placement's flotilla.dev/rebalance annotation
	// takes a new value.
	FailbackManual FailbackPolicy = "Manual"
)

// MovePolicy says when divided workloads move off a cluster that is not Ready, or whose
// replicas stay Unschedulable.
// +kubebuilder:validation:XValidation:rule="!has(self.failbackAfter) || !has(self.failback) || self.failback == 'Automatic'",message="failbackAfter applies to failback Automatic"
// +kubebuilder:validation:XValidation:rule="!has(self.progressDeadline) || duration(self.progressDeadline) > duration('0s')",message="progressDeadline must be positive"
// +kubebuilder:validation:XValidation:rule="!has(self.unschedulableAfter) || duration(self.unschedulableAfter) > duration('0s')",message="unschedulableAfter must be positive"
type MovePolicy struct {
	// clusterUnhealthyAfter fails a chosen cluster over when its Ready condition has not been
	// True for this long: its share of every divided workload goes to the other clusters, which
	// grow first. Its copies stay as they are while it cannot be reached (nothing is deleted for
	// health); once it answers again they are scaled down, the replacements being Ready by then.
	// The cluster stays chosen. Unset: a cluster that is not Ready keeps its share.
	// +optional
	ClusterUnhealthyAfter *metav1.Duration `json:"clusterUnhealthyAfter,omitempty"`

	// failback is Automatic (default: the share comes back once the cluster has been Ready for
	// failbackAfter) or Manual (it comes back when the Placement's flotilla.dev/rebalance
	// annotation takes a new value, so a flapping cluster is not trusted by itself).
	// +optional
	// +kubebuilder:default=Automatic
	Failback FailbackPolicy `json:"failback,omitempty"`

	// failbackAfter is how long a failed-over cluster must be Ready before its share comes back
	// under Automatic failback (default 10m).
	// +optional
	FailbackAfter *metav1.Duration `json:"failbackAfter,omitempty"`

	// unschedulableAfter places replicas elsewhere that stay Pending on a cluster because it
	// has no room for them: when a divided workload's copy has had pods Unschedulable (the
	// PodScheduled condition) for this long, the cluster is remembered to fit only what it
	// scheduled (its Delivery record's spec.replicas[].fits) and the rest of its share goes to
	// the other clusters, which grow first. The Pending pods stay until those are Ready, so a
	// cluster autoscaler there still sees the demand; then the copy is scaled down, and its
	// ReplicaSet removes the Pending pods first. The memory is dropped when the cluster's
	// allocatable resources change (Nodes added or removed). Pods are listed on the cluster
	// only while a copy has fewer Available replicas than it asks for. Crash-looping or
	// otherwise failing pods move nothing. Unset: Pending pods stay where they are.
	// +optional
	UnschedulableAfter *metav1.Duration `json:"unschedulableAfter,omitempty"`

	// order is MakeBeforeBreak (default: a cluster that is to run fewer replicas keeps them
	// until the clusters that gain are Ready, so the fleet never runs fewer than asked) or
	// BreakBeforeMake (a cluster that is to run more waits until the clusters that run fewer
	// are Ready at their new share, so the workload never runs more than asked: singletons and
	// exactly-once consumers). Under BreakBeforeMake a cluster that cannot be reached cannot
	// confirm, so a failover waits for it.
	// +optional
	// +kubebuilder:default=MakeBeforeBreak
	Order MoveOrder `json:"order,omitempty"`

	// progressDeadline is how long a move may wait before it is reported stalled: the owner's
	// Moving condition turns to reason MoveStalled and a Warning Event names the clusters
	// waited for. The move keeps waiting; nothing is removed for time alone. Default 10m.
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
}

// MoveOrder says whether a move adds replicas before it takes them away.
// +kubebuilder:validation:Enum=MakeBeforeBreak;BreakBeforeMake
type MoveOrder string

const (
	// MoveMakeBeforeBreak adds first: never fewer replicas than asked.
	MoveMakeBeforeBreak MoveOrder = "MakeBeforeBreak"
	// MoveBreakBeforeMake takes away first: never more replicas than asked.
	MoveBreakBeforeMake MoveOrder = "BreakBeforeMake"
)

// DefaultProgressDeadline is how long a move waits before it is reported stalled when the
// Placement does not say.
const DefaultProgressDeadline = 10 * time.Minute

// ReplicaMode says how a workload's replicas map to clusters.
// +kubebuilder:validation:Enum=Duplicate;Weighted;Capacity;Packed
type ReplicaMode string

const (
	// ReplicaModeDuplicate runs spec.replicas on every chosen cluster.
	ReplicaModeDuplicate ReplicaMode = "Duplicate"
	// ReplicaModeWeighted divides spec.replicas over the chosen clusters in proportion to
	// their weights (Webster's method: no cluster is favoured by its name, and raising the
	// total never lowers a cluster's share).
	ReplicaModeWeighted ReplicaMode = "Weighted"
	// ReplicaModeCapacity divides spec.replicas in proportion to each cluster's room for the
	// workload: its allocatable cpu, memory and pods (Cluster status.allocatable, over Ready,
	// schedulable Nodes) divided by what one replica requests (the pod template's containers).
	ReplicaModeCapacity ReplicaMode = "Capacity"
	// ReplicaModePacked places spec.replicas on as few clusters as possible: those already
	// running it first, then the one with the most room, each filled up to its room.
	ReplicaModePacked ReplicaMode = "Packed"
)

// ReplicaPolicy maps workloads' spec.replicas to clusters.
// +kubebuilder:validation:XValidation:rule="self.mode != 'Duplicate' || !has(self.clusters) || size(self.clusters) == 0",message="clusters apply to a divided mode, not to Duplicate"
type ReplicaPolicy struct {
	// mode is Weighted (default: spec.replicas divided in proportion to weights), Capacity (in
	// proportion to each cluster's room for one more replica of the workload, from its
	// allocatable resources and the pod template's requests; weights are ignored), Packed (as
	// few clusters as possible, those already running it first, then the most room; a cluster
	// is filled up to its room) or Duplicate (spec.replicas on every cluster). Room is what the
	// cluster's Ready Nodes can allocate, not what is free on them, so it changes when Nodes
	// come or go, never with usage; when every cluster is full, the rest is placed anyway
	// (Pending pods tell a cluster autoscaler to grow). A cluster whose room is not known counts
	// as the others' average.
	// +optional
	// +kubebuilder:default=Weighted
	Mode ReplicaMode `json:"mode,omitempty"`

	// clusters set a weight, a minimum and a maximum for groups of clusters; a cluster takes
	// the first entry it matches. A cluster matching none has weight 1, no minimum and no
	// maximum (an entry with clusterSelector: {} changes that default).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Clusters []ClusterReplicas `json:"clusters,omitempty"`
}

// ClusterReplicas is the share of a group of clusters in a division.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || type(self.min) != int || type(self.max) != int || self.min <= self.max",message="min must not exceed max"
type ClusterReplicas struct {
	// name identifies the entry.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusterNames and clusterSelector choose the clusters of the entry (either matches); with
	// neither, it matches none.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// clusterSelector chooses the clusters of the entry by their labels; {} matches every
	// cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// weight is the clusters' relative share (default 1). 0 keeps them at replicas 0 unless
	// the others cannot hold the total (their maxima): a warm standby.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Weight *int32 `json:"weight,omitempty"`

	// min is the fewest replicas each of the clusters runs: a number, or a percentage of the
	// total, rounded down ("10%"). Minima above the total are served by weight.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="must not be negative"
	Min *intstr.IntOrString `json:"min,omitempty"`

	// max is the most replicas each of the clusters runs: a number, or a percentage of the
	// total, rounded up ("50%": never more than half). Replicas no cluster can take are not
	// placed, and the owner says so.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="must not be negative"
	Max *intstr.IntOrString `json:"max,omitempty"`
}

// TolerationOperator says how a toleration matches a taint's value.
// +kubebuilder:validation:Enum=Equal;Exists
type TolerationOperator string

const (
	// TolerationOpEqual matches a taint with the same key and value.
	TolerationOpEqual TolerationOperator = "Equal"
	// TolerationOpExists matches a taint with the same key, whatever its value.
	TolerationOpExists TolerationOperator = "Exists"
)

// Toleration lets a placement choose clusters carrying a matching taint.
// +kubebuilder:validation:XValidation:rule="self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="value must be empty when operator is Exists"
type Toleration struct {
	// key of the taint; empty with operator Exists matches every taint.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	Key string `json:"key,omitempty"`

	// operator is Equal (default) or Exists.
	// +optional
	// +kubebuilder:default=Equal
	Operator TolerationOperator `json:"operator,omitempty"`

	// value of the taint, with operator Equal.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value,omitempty"`

	// effect of the taint to tolerate; empty tolerates every effect.
	// +optional
	// +kubebuilder:validation:Enum=NoSchedule;NoExecute;""
	Effect TaintEffect `json:"effect,omitempty"`
}

// ClusterDecision is one chosen cluster.
type ClusterDecision struct {
	// clusterName is the chosen Cluster.
	// +required
	// +kubebuilder:validation:MaxLength=253
	ClusterName string `json:"clusterName"`

	// tier is the name of the cluster's tier (spec.tiers); omitted for the implicit last tier.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Tier string `json:"tier,omitempty"`

	// state is omitted while the cluster takes its share (Active). FailedOver: not Ready for
	// longer than moves.clusterUnhealthyAfter; its share of divided workloads is 0 and its
	// copies stay until it can be reached. Returning: Ready again, its share 0 until failback.
	// +optional
	State DecisionState `json:"state,omitempty"`

	// since is when the cluster entered its state (states other than Active).
	// +optional
	Since *metav1.Time `json:"since,omitempty"`

	// replaces names the chosen cluster this one stands in for while that one is FailedOver or
	// Returning (clusterCount: a cluster away does not count toward it). Once that cluster is
	// Active again this one is let go: its objects leave once the others are Ready.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Replaces string `json:"replaces,omitempty"`

	// message says why the cluster is in its state (states other than Active).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`
}

// DecisionState is what a chosen cluster takes of divided workloads.
// +kubebuilder:validation:Enum=Active;FailedOver;Returning
type DecisionState string

const (
	// DecisionActive takes its share (the state is omitted).
	DecisionActive DecisionState = "Active"
	// DecisionFailedOver is not Ready beyond clusterUnhealthyAfter: its share is 0.
	DecisionFailedOver DecisionState = "FailedOver"
	// DecisionReturning is Ready again and waits for failback: its share is still 0.
	DecisionReturning DecisionState = "Returning"
)

// AnnotationRebalance on a Placement, set to a new value, gives failed-over clusters that are
// Ready again their share back under Manual failback. The value acted on is kept in
// status.lastRebalance, so applying the same value again does nothing.
const AnnotationRebalance = "flotilla.dev/rebalance"

// PlacementStatus is the scheduler's current choice.
type PlacementStatus struct {
	// decisions are the chosen clusters, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=clusterName
	// +kubebuilder:validation:MaxItems=10000
	Decisions []ClusterDecision `json:"decisions,omitempty"`

	// selectedClusters is the number of decisions.
	// +optional
	SelectedClusters int32 `json:"selectedClusters"`

	// conditions: Scheduled is True when at least one cluster is chosen; when none is, its
	// reason and message say why. Ready mirrors Scheduled, for kubectl wait; Stalled is True
	// while a selector does not parse (kstatus).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation the decisions are for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastRebalance is the flotilla.dev/rebalance value last acted on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	LastRebalance string `json:"lastRebalance,omitempty"`
}

// Placement chooses the clusters that Propagations and labelled objects go to.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fpl,categories=flotilla
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.selectedClusters`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Scheduled")].reason`
// +kubebuilder:printcolumn:name="Replicas",type=string,priority=1,JSONPath=`.spec.replicas.mode`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Placement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which clusters to choose.
	// +required
	Spec PlacementSpec `json:"spec"`

	// status is the current choice.
	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementList is a list of Placements.
//
// +kubebuilder:object:root=true
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Placement `json:"items"`
}

func init() {
	register(&Placement{}, &PlacementList{})
}

// The condition tree of a Placement.
//
//	Scheduled  True   ClustersSelected  at least one cluster chosen
//	           False  NoClustersMatch   no cluster is named or matches the selector
//	           False  ClustersExcluded  clusters match but are cordoned or tainted
//	           True   ClusterCountNotMet fewer eligible clusters than clusterCount; all chosen
//	           False  InvalidSelector   a selector does not parse; the previous decisions stay
//	Ready      as Scheduled                 for kubectl wait (package statusconds)
//	Stalled    True   InvalidSelector   present only while a selector does not parse (kstatus)
const (
	PlacementScheduled = "Scheduled"

	ReasonClustersSelected = "ClustersSelected"
	ReasonNoClustersMatch  = "NoClustersMatch"
	ReasonClustersExcluded = "ClustersExcluded"
	// ReasonClusterCountNotMet: fewer clusters are eligible than clusterCount asks for; every
	// eligible one is chosen.
	ReasonClusterCountNotMet = "ClusterCountNotMet"
	// ReasonInvalidSelector: a selector of the spec does not parse (the API accepts what
	// only a parse refuses, such as operator In without values); the clusters chosen before
	// stay chosen, so nothing moves until it is fixed.
	ReasonInvalidSelector = "InvalidSelector"
)
