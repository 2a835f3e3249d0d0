package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIPropagationSpec says which ResourceGraphDefinitions to serve, where, and what happens to
// their CRDs when they stop being served.
type APIPropagationSpec struct {
	// resourceGraphDefinitions choose kro ResourceGraphDefinitions (kro.run/v1alpha1) on the
	// hub, by name and/or by label. An RGD chosen by several APIPropagations is served by the
	// one whose name sorts first (one being deleted only when no other chooses it); the others
	// report it as Conflict in status.apis. An RGD labelled or annotated
	// kro.run/distribute: "false" stays on the hub, whatever chooses it.
	// +required
	ResourceGraphDefinitions ResourceGraphDefinitionSelector `json:"resourceGraphDefinitions"`

	// placementRef names the Placement that chooses the clusters. namespace is required and
	// must be an admin namespace (flotilla-system unless the hub is started with
	// --admin-namespace): a served API is a cluster-wide CRD on every chosen cluster, so only
	// cluster administrators may steer it, as for a ClusterPropagation.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.namespace) && size(self.namespace) > 0",message="placementRef.namespace is required for an APIPropagation"
	PlacementRef PlacementRef `json:"placementRef"`

	// removal says what happens to a served CRD on a cluster when the API stops being served
	// there: the cluster leaves the Placement, the ResourceGraphDefinition is deleted, or this
	// APIPropagation is deleted. Orphan (default) leaves the CRD, and with it every instance
	// users created, unmanaged on the cluster, as kro itself keeps CRDs by default. Delete
	// removes the CRD; a CRD that still has instances is removed only once the
	// flotilla.dev/confirm-prune annotation on this APIPropagation says "removed", because
	// deleting a CRD deletes every instance of it. Choosing an RGD no longer (an edit of
	// resourceGraphDefinitions) always orphans: an edit is too easy a way to delete an API.
	// +optional
	// +kubebuilder:default=Orphan
	Removal DeletionPolicy `json:"removal,omitempty"`

	// tenancy says where the instances of the APIs served may reach on their cluster.
	// Namespace (default): an instance's children, and the objects it refers to (externalRef),
	// are namespaced objects of the instance's own namespace, so whoever may create an
	// instance in a namespace gets nothing beyond it. Cluster: anywhere on the instance's
	// cluster, cluster-scoped kinds (Namespaces, RBAC, CRDs, StorageClasses) and other
	// namespaces included, as a kro running on the cluster with its own permissions would do;
	// Flotilla writes them with its identity there, so anyone allowed to create an instance
	// gets what the graph makes: choose it for APIs that only cluster administrators
	// instantiate, and limit who may create their instances with RBAC on the clusters.
	// Instances of a cluster-scoped kind (an RGD of scope Cluster) are expanded only under
	// Cluster: under Namespace they show ERROR saying so, and nothing is written for them.
	// +optional
	// +kubebuilder:default=Namespace
	Tenancy Tenancy `json:"tenancy,omitempty"`

	// revisionPins hold a cluster at a kept revision of an RGD this APIPropagation serves,
	// while its other clusters get the RGD's newest revision: the cluster serves the CRD and
	// expands instances as that revision says. A pinned revision is never pruned from the
	// history; a pin to one that is not kept fails that cluster (RevisionNotKept), which keeps
	// what it serves. Set by a person or a rollout tool; Flotilla never sets it.
	// +optional
	// +listType=map
	// +listMapKey=resourceGraphDefinition
	// +listMapKey=cluster
	// +kubebuilder:validation:MaxItems=256
	RevisionPins []APIRevisionPin `json:"revisionPins,omitempty"`
}

// APIRevisionPin holds one cluster at a kept revision of one ResourceGraphDefinition.
type APIRevisionPin struct {
	// resourceGraphDefinition is the RGD's name, e.g. webapp.kro.run.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ResourceGraphDefinition string `json:"resourceGraphDefinition"`

	// cluster is the Cluster held.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`

	// revision is the name of one of the RGD's ControllerRevisions in flotilla-system
	// (status.apis lists the revision each cluster serves).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision"`
}

// PinOf returns the revision the pins hold rgd's cluster at, or "".
func (s *APIPropagationSpec) PinOf(rgd, cluster string) string {
	for _, p := range s.RevisionPins {
		if p.ResourceGraphDefinition == rgd && p.Cluster == cluster {
			return p.Revision
		}
	}
	return ""
}

// Tenancy is where the instances of a served API may reach on their cluster.
// +kubebuilder:validation:Enum=Namespace;Cluster
type Tenancy string

const (
	// TenancyNamespace confines an instance to its own namespace.
	TenancyNamespace Tenancy = "Namespace"
	// TenancyCluster lets an instance reach anywhere on its cluster.
	TenancyCluster Tenancy = "Cluster"
)

// ResourceGraphDefinitionSelector chooses ResourceGraphDefinitions by name and by label; an RGD
// matching either is chosen.
// +kubebuilder:validation:XValidation:rule="(has(self.names) && size(self.names) > 0) || has(self.labelSelector)",message="name at least one ResourceGraphDefinition or set labelSelector"
type ResourceGraphDefinitionSelector struct {
	// names of ResourceGraphDefinitions, e.g. webapp.kro.run.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	Names []string `json:"names,omitempty"`

	// labelSelector chooses ResourceGraphDefinitions by label.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// APIPhase is where serving one API on one cluster stands.
// +kubebuilder:validation:Enum=Pending;CompileFailed;Blocked;Conflict;Delivering;Serving;Failed;Removing
type APIPhase string

const (
	// APIPending: nothing is known yet, typically because the cluster is not connected.
	APIPending APIPhase = "Pending"
	// APICompileFailed: the RGD does not compile against this cluster's schemas (a kind it
	// uses is not served there, or kro rejects the graph); an earlier generation's CRD, if
	// any, stays served.
	APICompileFailed APIPhase = "CompileFailed"
	// APIBlocked: the new CRD would break the one served (a field removed, a type changed, a
	// new required field...) and the RGD does not carry kro.run/allow-breaking-changes: "true".
	APIBlocked APIPhase = "Blocked"
	// APIConflict: a CRD of that name exists on the cluster and is not this RGD's.
	APIConflict APIPhase = "Conflict"
	// APIDelivering: the CRD is being written, or waits to be Established.
	APIDelivering APIPhase = "Delivering"
	// APIServing: the CRD of the RGD's newest generation is Established on the cluster.
	APIServing APIPhase = "Serving"
	// APIFailed: the cluster refused the CRD, or its delivery failed.
	APIFailed APIPhase = "Failed"
	// APIRemoving: the cluster left the Placement; its CRD is being removed (Delete) or
	// released (Orphan), or kept until the removal is confirmed (reason PruneBlocked: the
	// message names the command).
	APIRemoving APIPhase = "Removing"
)

// Reasons of an APIClusterResult that is not Serving.
const (
	// ReasonSchemaNotFound: a kind the RGD uses is not served on the cluster (a CRD missing
	// there); installing it there serves the API with no change on the hub.
	ReasonSchemaNotFound = "SchemaNotFound"
	// ReasonInvalidGraph: kro rejects the graph against the cluster's schemas (a CEL type
	// error, an unknown field, a cycle, a bad SimpleSchema).
	ReasonInvalidGraph = "InvalidGraph"
	// ReasonSchemaUnreadable: the cluster's discovery or /openapi/v3 could not be read.
	ReasonSchemaUnreadable = "SchemaUnreadable"
	// ReasonBreakingChange: the new CRD would break the served one.
	ReasonBreakingChange = "BreakingChange"
	// ReasonDisconnected: the cluster is not connected to the hub now.
	ReasonDisconnected = "Disconnected"
	// ReasonRevisionNotKept: the cluster's Delivery record pins a revision of the RGD that is
	// not kept (kubectl get controllerrevisions -n flotilla-system -l flotilla.dev/owner=...).
	ReasonRevisionNotKept = "RevisionNotKept"
)

// APIResult is one ResourceGraphDefinition this APIPropagation chooses.
type APIResult struct {
	// name of the ResourceGraphDefinition.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// kind served, kind.group (e.g. WebApp.kro.run).
	// +optional
	// +kubebuilder:validation:MaxLength=316
	Kind string `json:"kind,omitempty"`

	// generation is the RGD's newest metadata.generation: what every cluster should serve.
	// +optional
	Generation int64 `json:"generation,omitempty"`

	// servingClusters is the number of target clusters where this API's newest generation is
	// Established.
	// +optional
	ServingClusters int32 `json:"servingClusters"`

	// failedClusters is the number of target clusters where it failed (CompileFailed,
	// Blocked, Conflict, Failed).
	// +optional
	FailedClusters int32 `json:"failedClusters"`

	// message says why this APIPropagation does not serve the RGD, if it does not: another
	// APIPropagation serves it, or it does not exist.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// instances counts the API's instances on every cluster where they are watched.
	// +optional
	Instances *InstanceCounts `json:"instances,omitempty"`

	// notReady names the first instances that are not ACTIVE, in cluster, namespace and name
	// order: at most 5.
	// +optional
	// +kubebuilder:validation:MaxItems=5
	NotReady []NotReadyInstance `json:"notReady,omitempty"`
}

// InstanceCounts counts the instances of a served API by the state kro gives them
// (status.state). An instance not looked at yet counts as inProgress; total counts every one.
type InstanceCounts struct {
	// total is the number of instances.
	Total int32 `json:"total"`
	// active is the number of instances that are ACTIVE (ready).
	Active int32 `json:"active"`
	// inProgress is the number of instances IN_PROGRESS.
	InProgress int32 `json:"inProgress"`
	// error is the number of instances in ERROR.
	Error int32 `json:"error"`
	// deleting is the number of instances DELETING.
	Deleting int32 `json:"deleting"`
}

// NotReadyInstance is an instance that is not ACTIVE, and why (its Ready condition).
type NotReadyInstance struct {
	// cluster is the instance's cluster.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`

	// instance is namespace/name (name alone for a cluster-scoped kind).
	// +required
	// +kubebuilder:validation:MaxLength=507
	Instance string `json:"instance"`

	// state is kro's state of the instance: IN_PROGRESS, ERROR, DELETING.
	// +required
	// +kubebuilder:validation:MaxLength=32
	State string `json:"state"`

	// reason is the reason of its Ready condition.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`

	// message is the message of its Ready condition, at most 256 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`
}

// APIClusterResult is one API on one cluster.
type APIClusterResult struct {
	// cluster is the Cluster's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`

	// api is the ResourceGraphDefinition's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	API string `json:"api"`

	// phase is Pending, CompileFailed, Blocked, Conflict, Delivering, Serving, Failed or
	// Removing.
	// +required
	Phase APIPhase `json:"phase"`

	// servedGeneration is the RGD generation the CRD Established on the cluster was compiled
	// from (its flotilla.dev/rgd-generation annotation); 0 when none is. A cluster where a
	// newer generation fails to compile or is blocked keeps serving this one.
	// +optional
	ServedGeneration int64 `json:"servedGeneration,omitempty"`

	// reason is a machine-readable cause of a phase other than Serving: SchemaNotFound,
	// InvalidGraph, SchemaUnreadable, BreakingChange, Conflict, Disconnected, ...
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`

	// message says what failed or what is awaited; at most 512 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// instances counts the API's instances on the cluster by kro state, read from the hub's
	// watch of them; absent while none is known (the API is not served there).
	// +optional
	Instances *InstanceCounts `json:"instances,omitempty"`

	// rollout is where the cluster stands in the rollout of the RGD's newest revision (its
	// stage, state, the revision it serves or is given and since when), when the Placement
	// rolls revisions out; absent for a cluster spec.revisionPins pins.
	// +optional
	Rollout *ClusterRolloutState `json:"rollout,omitempty"`
}

// APIPropagationStatus is where each chosen API stands on each cluster. It is bounded: at most
// 256 APIs and 1000 (cluster, API) results, failures first; the counts always cover every
// cluster.
type APIPropagationStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Accepted is True when the spec is valid, the Placement exists in an admin
	// namespace and at least one ResourceGraphDefinition is chosen. Serving is True when every
	// API this object serves is Established at its newest generation on every target cluster;
	// otherwise its reason is the first problem (CompileFailed, Blocked, Conflict, Failed,
	// Progressing, NoClusters, NotAccepted) and its message names the cluster. Ready is True
	// when both are, else as the first that is not, for kubectl wait; for kstatus, Reconciling
	// is True while CRDs are on their way and Stalled while an API cannot be served.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// apiCount is the number of ResourceGraphDefinitions this object serves (chosen, existing
	// and not served by another APIPropagation).
	// +optional
	APICount int32 `json:"apiCount"`

	// targetClusters is the number of clusters the Placement chooses.
	// +optional
	TargetClusters int32 `json:"targetClusters"`

	// servingClusters is the number of target clusters where every API is Serving.
	// +optional
	ServingClusters int32 `json:"servingClusters"`

	// failedClusters is the number of target clusters where at least one API failed.
	// +optional
	FailedClusters int32 `json:"failedClusters"`

	// instances counts the instances of every API this object serves, on every cluster.
	// +optional
	Instances *InstanceCounts `json:"instances,omitempty"`

	// apis has one entry per chosen ResourceGraphDefinition.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=256
	APIs []APIResult `json:"apis,omitempty"`

	// clusterResults has one entry per (cluster, API), failures first.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	// +listMapKey=api
	// +kubebuilder:validation:MaxItems=1000
	ClusterResults []APIClusterResult `json:"clusterResults,omitempty"`
}

// APIPropagation serves kro ResourceGraphDefinitions of the hub as APIs on the clusters of a
// Placement: each chosen RGD is compiled against each cluster's own schemas, and the CRD it
// generates is delivered there (with kro's labels) and waited for until Established, including
// on clusters that join the Placement later. The RGD itself stays kro's object, unchanged:
// Flotilla reads it, never writes its spec or status (a kro controller on the hub may own
// them), and adds a finalizer only while removal is Delete.
//
// Why an object and not the flotilla.dev/placement label of transparent mode: an RGD is
// cluster-scoped while a Placement is namespaced, so a label would need a second label for the
// Placement's namespace; the Placement must be in an admin namespace; a removal policy and a
// per-cluster status need a home; and Flotilla does not write status into kro's object. An
// APIPropagation is explicit, validated, listed with `kubectl get fapi`, and can choose many
// RGDs by label.
//
// It is for cluster administrators: a served API is a cluster-wide CRD on every chosen
// cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fapi,categories=flotilla
// +kubebuilder:printcolumn:name="APIs",type=integer,JSONPath=`.status.apiCount`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.targetClusters`
// +kubebuilder:printcolumn:name="Serving",type=integer,JSONPath=`.status.servingClusters`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failedClusters`
// +kubebuilder:printcolumn:name="Instances",type=integer,JSONPath=`.status.instances.total`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.instances.active`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Serving")].reason`
// +kubebuilder:printcolumn:name="Placement",type=string,priority=1,JSONPath=`.spec.placementRef.name`
// +kubebuilder:printcolumn:name="Removal",type=string,priority=1,JSONPath=`.spec.removal`
// +kubebuilder:printcolumn:name="Tenancy",type=string,priority=1,JSONPath=`.spec.tenancy`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type APIPropagation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which ResourceGraphDefinitions to serve, where, and what happens to their
	// CRDs when they stop being served.
	// +required
	Spec APIPropagationSpec `json:"spec"`

	// status is where each API stands on each cluster.
	// +optional
	Status APIPropagationStatus `json:"status,omitempty"`
}

// APIPropagationList is a list of APIPropagations.
//
// +kubebuilder:object:root=true
type APIPropagationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APIPropagation `json:"items"`
}

func init() {
	register(&APIPropagation{}, &APIPropagationList{})
}
