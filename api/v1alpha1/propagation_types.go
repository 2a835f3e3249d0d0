package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationSpec says what to deliver, where, and how.
// +kubebuilder:validation:XValidation:rule="(has(self.resourceSelectors) && size(self.resourceSelectors) > 0) || (has(self.manifests) && size(self.manifests) > 0)",message="select at least one resource or manifest source"
type PropagationSpec struct {
	// resourceSelectors choose live hub objects to deliver. A Propagation selects only in its
	// own namespace; a ClusterPropagation also selects cluster-scoped kinds and any namespace.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// manifests are ConfigMaps or Secrets, in the Propagation's namespace, whose data values
	// hold YAML documents to deliver (one or many per key). Use them for add-ons that must not
	// run on the hub itself.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Manifests []ManifestSource `json:"manifests,omitempty"`

	// placementRef names the Placement that chooses the clusters.
	// +required
	PlacementRef PlacementRef `json:"placementRef"`

	// strategy says how delivered objects are treated.
	// +optional
	Strategy PropagationStrategy `json:"strategy,omitempty"`
}

// ResourceSelector chooses hub objects by kind and by name or labels.
// +kubebuilder:validation:XValidation:rule="!(has(self.name) && has(self.labelSelector))",message="set name or labelSelector, not both"
type ResourceSelector struct {
	// apiVersion of the objects, e.g. apps/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	APIVersion string `json:"apiVersion"`

	// kind of the objects, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`

	// name of one object; without name and labelSelector, every object of the kind is chosen.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// namespace of the objects, for a ClusterPropagation; a Propagation always selects in its
	// own namespace and must leave this empty.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// labelSelector chooses objects by label.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// ManifestSourceKind is where manifests are kept.
// +kubebuilder:validation:Enum=ConfigMap;Secret
type ManifestSourceKind string

// ManifestSource names a ConfigMap or Secret that carries manifests.
type ManifestSource struct {
	// kind is ConfigMap or Secret.
	// +required
	Kind ManifestSourceKind `json:"kind"`

	// name of the ConfigMap or Secret, in the Propagation's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PlacementRef names a Placement.
type PlacementRef struct {
	// name of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace of the Placement, for a ClusterPropagation; a Propagation uses its own.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// DeletionPolicy says what happens to delivered objects when they stop being selected, a
// cluster leaves the placement, or the Propagation is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionDelete removes them from the spokes.
	DeletionDelete DeletionPolicy = "Delete"
	// DeletionOrphan leaves them on the spokes, unmanaged.
	DeletionOrphan DeletionPolicy = "Orphan"
)

// ConflictPolicy says what happens when an object to deliver already exists on a spoke and
// Flotilla did not create it.
// +kubebuilder:validation:Enum=Reject;Adopt
type ConflictPolicy string

const (
	// ConflictReject leaves the existing object alone and reports a Conflict.
	ConflictReject ConflictPolicy = "Reject"
	// ConflictAdopt takes the existing object over.
	ConflictAdopt ConflictPolicy = "Adopt"
)

// PropagationStrategy says how delivered objects are treated.
type PropagationStrategy struct {
	// deletion is Delete (default) or Orphan.
	// +optional
	// +kubebuilder:default=Delete
	Deletion DeletionPolicy `json:"deletion,omitempty"`

	// conflict is Reject (default) or Adopt.
	// +optional
	// +kubebuilder:default=Reject
	Conflict ConflictPolicy `json:"conflict,omitempty"`
}

// ClusterResult is the delivery state of one cluster.
type ClusterResult struct {
	// cluster is the Cluster's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`

	// revision is the hash of the object set last delivered completely to the cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Revision string `json:"revision,omitempty"`

	// applied is the number of objects on the cluster in their desired state.
	// +optional
	Applied int32 `json:"applied"`

	// ready is the number of objects that are ready on the cluster (kstatus: a Deployment
	// rolled out and Available, a CRD Established, a ConfigMap at once).
	// +optional
	Ready int32 `json:"ready"`

	// failed is the number of objects that could not be delivered.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// message says what failed, first failure first; at most 512 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// PropagationStatus is the fleet-wide result of a Propagation. Its size is bounded: one entry
// of at most ~700 bytes per cluster, and at most 1000 entries (clusters with failures first),
// so it stays under 1 MiB at any fleet size; the counts always cover every cluster.
type PropagationStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Applied is True when every chosen cluster has every object in its desired
	// state, Ready when, in addition, every object is ready there; their reasons say what is
	// missing otherwise.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// selectedObjects is the number of objects selected on the hub.
	// +optional
	SelectedObjects int32 `json:"selectedObjects"`

	// clusters is the number of clusters the placement chooses.
	// +optional
	TargetClusters int32 `json:"targetClusters"`

	// appliedClusters is the number of clusters with every object delivered.
	// +optional
	AppliedClusters int32 `json:"appliedClusters"`

	// readyClusters is the number of clusters with every object delivered and ready.
	// +optional
	ReadyClusters int32 `json:"readyClusters"`

	// failedClusters is the number of clusters with at least one failure.
	// +optional
	FailedClusters int32 `json:"failedClusters"`

	// clusterResults holds one entry per cluster, failures first.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	// +kubebuilder:validation:MaxItems=1000
	ClusterResults []ClusterResult `json:"clusterResults,omitempty"`

	// deliveredKinds lists every kind this Propagation has delivered (group/version/Kind), so
	// that pruning after a controller restart knows where to look. Not an API contract.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	DeliveredKinds []string `json:"deliveredKinds,omitempty"`
}

// Propagation delivers selected hub objects of its namespace to the clusters of a Placement.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fprop,categories=flotilla
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.selectedObjects`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.targetClusters`
// +kubebuilder:printcolumn:name="Applied",type=integer,JSONPath=`.status.appliedClusters`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyClusters`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failedClusters`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Propagation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what to deliver, where, and how.
	// +required
	Spec PropagationSpec `json:"spec"`

	// status is the fleet-wide result.
	// +optional
	Status PropagationStatus `json:"status,omitempty"`
}

// PropagationList is a list of Propagations.
//
// +kubebuilder:object:root=true
type PropagationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Propagation `json:"items"`
}

// ClusterPropagation delivers selected hub objects of any namespace, and cluster-scoped
// objects such as CustomResourceDefinitions, to the clusters of a Placement. It is for
// administrators.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fcprop,categories=flotilla
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.selectedObjects`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.targetClusters`
// +kubebuilder:printcolumn:name="Applied",type=integer,JSONPath=`.status.appliedClusters`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyClusters`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failedClusters`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPropagation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what to deliver, where, and how. placementRef.namespace is required.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.placementRef.namespace) && size(self.placementRef.namespace) > 0",message="placementRef.namespace is required for a ClusterPropagation"
	// +kubebuilder:validation:XValidation:rule="!has(self.manifests) || size(self.manifests) == 0",message="manifests are carried by namespaced Propagations only"
	Spec PropagationSpec `json:"spec"`

	// status is the fleet-wide result.
	// +optional
	Status PropagationStatus `json:"status,omitempty"`
}

// ClusterPropagationList is a list of ClusterPropagations.
//
// +kubebuilder:object:root=true
type ClusterPropagationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPropagation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Propagation{}, &PropagationList{}, &ClusterPropagation{}, &ClusterPropagationList{})
}
