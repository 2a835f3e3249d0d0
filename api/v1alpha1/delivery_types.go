package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeliveryOwner names the hub object a Delivery belongs to.
type DeliveryOwner struct {
	// apiVersion of the owner, e.g. flotilla.dev/v1alpha1 or apps/v1.
	// +required
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`

	// kind of the owner: Propagation, ClusterPropagation, or the kind of a transparent-mode
	// object (Deployment, ConfigMap, ...).
	// +required
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`

	// namespace of the owner; empty for a ClusterPropagation.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// name of the owner.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// DeliverySpec says whose delivery to which cluster the record is.
type DeliverySpec struct {
	// owner is the hub object that delivers.
	// +required
	Owner DeliveryOwner `json:"owner"`

	// cluster is the Cluster delivered to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`

	// kinds lists every kind (group/version/Kind) the owner has delivered to the cluster, and is
	// written before an object of a new kind is: pruning and removal look for the owner's
	// objects in these kinds, whatever happened to the owner's status or the controller's
	// memory. It only grows while the record exists.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=317
	Kinds []string `json:"kinds,omitempty"`

	// replicas are the shares of the owner's divided workloads on the cluster (spec.replicas as
	// Flotilla writes it there), written with the delivery, before it. They are the division's
	// memory: it stays where it is (the remainder keeps to the cluster that has it) across
	// restarts and a wiped status, and a move knows what each cluster runs without reading the
	// cluster. Workloads that are not divided are not listed.
	// +optional
	// +listType=map
	// +listMapKey=object
	// +kubebuilder:validation:MaxItems=1000
	Replicas []WorkloadReplicas `json:"replicas,omitempty"`

	// placed is what the owner's workloads on the cluster request together (replicas times the
	// pod template's cpu and memory requests, and one pod per replica), written with the
	// delivery, before it: the cluster's status.placed sums it, and its placementLimits are
	// measured against it.
	// +optional
	Placed corev1.ResourceList `json:"placed,omitempty"`

	// work is what the cluster must run, readable from the hub's durable objects alone: the
	// owner's revision it runs (its latest, or the one the owner pins the cluster to), the
	// changes the cluster's own share of divided replicas and overrides make to it, and the
	// strategy that applies there. The hub writes it after it decides, aside from the delivery
	// (it may trail the delivery by moments). Absent for owner kinds that keep no revisions yet.
	// +optional
	Work *DeliveryWork `json:"work,omitempty"`
}

// DeliveryWork is what one cluster must run of one owner.
type DeliveryWork struct {
	// revision is the name of the ControllerRevision, in the record's namespace, that holds the
	// owner's objects the cluster runs before its own changes. A revision keeps a Secret
	// without its data, and where the data is read from.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision"`

	// digest is the revision of the objects as the cluster runs them, after its changes: what
	// status.revision reports once they are delivered.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Digest string `json:"digest"`

	// changes turn the revision's objects into the cluster's, one entry per object that
	// differs there.
	// +optional
	// +listType=map
	// +listMapKey=object
	// +kubebuilder:validation:MaxItems=10000
	Changes []ObjectChange `json:"changes,omitempty"`

	// strategy is how the objects are applied on the cluster.
	// +optional
	Strategy PropagationStrategy `json:"strategy,omitempty"`
}

// ObjectChange is how one object differs on one cluster from the owner's revision.
type ObjectChange struct {
	// object is the object's key: group/Kind/namespace/name (apps/Deployment/team/web).
	// +required
	// +kubebuilder:validation:MaxLength=400
	Object string `json:"object"`

	// patch is a JSON merge patch (RFC 7386) of the revision's object into the cluster's; of an
	// empty object, when the revision has none of that key.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Patch *apiextensionsv1.JSON `json:"patch,omitempty"`

	// omit says the cluster does not get the object at all.
	// +optional
	Omit bool `json:"omit,omitempty"`
}

// WorkloadReplicas is one divided workload's share on a cluster.
type WorkloadReplicas struct {
	// object is the workload: group/Kind/namespace/name (apps/Deployment/team/web).
	// +required
	// +kubebuilder:validation:MaxLength=400
	Object string `json:"object"`

	// replicas is its spec.replicas on the cluster.
	// +required
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`

	// fits is how many replicas of the workload the cluster could schedule when some stayed
	// Unschedulable longer than the Placement's moves.unschedulableAfter: the division gives
	// the cluster no more than that while other clusters have room. Absent: no limit known.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Fits *int32 `json:"fits,omitempty"`

	// fitsAllocatable is the cluster's status.allocatable when fits was found; fits is
	// forgotten once the cluster's allocatable resources differ from it.
	// +optional
	FitsAllocatable corev1.ResourceList `json:"fitsAllocatable,omitempty"`
}

// DeliveredObjects are the names of delivered objects of one kind in one namespace.
type DeliveredObjects struct {
	// kind is group/version/Kind.
	// +required
	// +kubebuilder:validation:MaxLength=317
	Kind string `json:"kind"`

	// namespace is empty for cluster-scoped objects.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// names of the objects.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MaxLength=253
	Names []string `json:"names"`
}

// DeliveryStatus is the latest result of the delivery on the cluster.
type DeliveryStatus struct {
	// revision is the hash of the object set last delivered completely; each object's own hash
	// is in its flotilla.dev/hash annotation on the cluster. Per-object hashes are not repeated
	// here: at ten thousand objects they would make every change rewrite a large record.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Revision string `json:"revision,omitempty"`

	// objects are the objects of the latest delivery, grouped by kind and namespace.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Objects []DeliveredObjects `json:"objects,omitempty"`

	// count is the number of objects in objects.
	// +optional
	Count int32 `json:"count"`

	// applied is the number of objects on the cluster in their desired state.
	// +optional
	Applied int32 `json:"applied"`

	// ready is the number of objects that are ready on the cluster (kstatus).
	// +optional
	Ready int32 `json:"ready"`

	// failed is the number of objects that could not be delivered.
	// +optional
	Failed int32 `json:"failed"`

	// drifted is the number of objects that differ from what Flotilla applied and are left so.
	// +optional
	Drifted int32 `json:"drifted"`

	// fighting is the number of objects someone on the cluster changes back after every
	// correction.
	// +optional
	Fighting int32 `json:"fighting,omitempty"`

	// message says what failed or waits, first failure first; at most 512 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// reason names, in one CamelCase word, why the latest result is not complete, when the
	// cluster's agent reports one: a fleet API a pull cluster's agent could not serve there
	// (CompileFailed, SchemaNotFound, BreakingChange, Conflict, ...). Absent otherwise.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Reason string `json:"reason,omitempty"`
}

// Delivery is Flotilla's durable record of what one owner delivers to one cluster. Flotilla
// writes it: before it first delivers a kind to the cluster (spec.kinds), and when the result
// changes (status). It is what removal and pruning rely on, so a controller restart, a wiped or
// truncated owner status, or a restore from backup never loses track of a cluster. It lives in
// the owner's namespace (flotilla-system for ClusterPropagations), is owned by the owner (the
// garbage collector removes it with the owner), and is deleted once the owner's objects are
// gone from the cluster. Only the hub controller may write it (a ValidatingAdmissionPolicy
// refuses everyone else), and readers believe it only where the controller wrote it for a live
// owner: it is state, not configuration. A cluster is pinned to a revision on the owner
// (spec.revisionPins), not here.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fdlv,categories=flotilla
// +kubebuilder:selectablefield:JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.owner.kind`
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.spec.owner.name`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.count`
// +kubebuilder:printcolumn:name="Applied",type=integer,JSONPath=`.status.applied`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Delivery struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DeliverySpec `json:"spec"`
	// +optional
	Status DeliveryStatus `json:"status,omitempty"`
}

// DeliveryList is a list of Deliveries.
//
// +kubebuilder:object:root=true
type DeliveryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Delivery `json:"items"`
}

func init() {
	register(&Delivery{}, &DeliveryList{})
}
