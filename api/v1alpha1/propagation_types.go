package v1alpha1

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationSpec says what to deliver, where, and how.
// +kubebuilder:validation:XValidation:rule="(has(self.resourceSelectors) && size(self.resourceSelectors) > 0) || (has(self.manifests) && size(self.manifests) > 0)",message="select at least one resource or manifest source"
type PropagationSpec struct {
	// resourceSelectors choose live hub objects to deliver. A Propagation selects only in its
	// own namespace; a ClusterPropagation also selects cluster-scoped kinds and any namespace.
	// Secrets that hold credentials are never selected, whatever the selector says: no Secret
	// of flotilla-system (where spoke kubeconfigs live), no Secret a Cluster names in
	// spec.credentials, and no ServiceAccount token or bootstrap token Secret. Selected Secrets
	// are read one by one from the hub API server; the controller caches only Secrets' metadata.
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

	// overrides change delivered objects per cluster. Rules apply in order; a rule that fails
	// on a cluster (bad path, CEL error, object rejected by the cluster) fails that cluster
	// only, naming the rule, and the last good version stays live there.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Overrides []Override `json:"overrides,omitempty"`

	// revisionPins hold clusters at kept revisions of this owner, while its other clusters
	// follow its latest revision: a pinned cluster gets the objects of its revision (with its
	// overrides), and drift there is corrected back to them. A pinned revision is never pruned
	// from the history; a pin to one that is not kept is an error on that cluster only, which
	// keeps what it has. A pin to a cluster the Placement does not choose does nothing. Set by
	// a person or a rollout tool; Flotilla never sets it.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	// +kubebuilder:validation:MaxItems=256
	RevisionPins []RevisionPin `json:"revisionPins,omitempty"`
}

// RevisionPin holds one cluster at a kept revision of its owner.
type RevisionPin struct {
	// cluster is the Cluster held.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`

	// revision is the name of one of the owner's ControllerRevisions, in the owner's namespace
	// (flotilla-system for a cluster-scoped owner):
	// kubectl get controllerrevisions -l flotilla.dev/owner=<the owner's flotilla.dev/owner label value>.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision"`
}

// ParseRevisionPins reads the flotilla.dev/revision-pins annotation: comma-separated
// cluster=revision pairs, each cluster named once.
func ParseRevisionPins(value string) ([]RevisionPin, error) {
	var pins []RevisionPin
	seen := map[string]bool{}
	for _, pair := range strings.Split(value, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		cluster, revision, ok := strings.Cut(pair, "=")
		cluster, revision = strings.TrimSpace(cluster), strings.TrimSpace(revision)
		if !ok || cluster == "" || revision == "" {
			return nil, fmt.Errorf("%s: %q is not cluster=revision; write e.g. %s=spoke-1=<a ControllerRevision's name>", AnnotationRevisionPins, pair, AnnotationRevisionPins)
		}
		if seen[cluster] {
			return nil, fmt.Errorf("%s: cluster %s is pinned twice", AnnotationRevisionPins, cluster)
		}
		seen[cluster] = true
		pins = append(pins, RevisionPin{Cluster: cluster, Revision: revision})
	}
	return pins, nil
}

// PinOf returns the revision pins hold cluster at, or "".
func PinOf(pins []RevisionPin, cluster string) string {
	for _, p := range pins {
		if p.Cluster == cluster {
			return p.Revision
		}
	}
	return ""
}

// Override is one per-cluster change to delivered objects: a JSON patch, a JSON merge patch,
// or a CEL expression computing one field.
// +kubebuilder:validation:XValidation:rule="[has(self.jsonPatch), has(self.mergePatch), has(self.cel)].filter(x, x).size() == 1",message="set exactly one of jsonPatch, mergePatch and cel"
type Override struct {
	// name identifies the rule in errors and in the flotilla.dev/overrides annotation of the
	// objects it changed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusterNames and clusterSelector choose the clusters the rule applies to (either
	// matches); with neither, the rule applies everywhere.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// clusterSelector chooses clusters by label.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// target limits the rule to some objects; without it the rule applies to every object.
	// +optional
	Target *OverrideTarget `json:"target,omitempty"`

	// jsonPatch is a list of RFC 6902 operations.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	JSONPatch []JSONPatchOperation `json:"jsonPatch,omitempty"`

	// mergePatch is an RFC 7386 JSON merge patch.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	MergePatch *apiextensionsv1.JSON `json:"mergePatch,omitempty"`

	// cel sets one field to the value of a CEL expression.
	// +optional
	CEL *CELOverride `json:"cel,omitempty"`
}

// OverrideTarget chooses objects by kind and name; empty fields match everything.
type OverrideTarget struct {
	// apiVersion of the objects, e.g. apps/v1.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	APIVersion string `json:"apiVersion,omitempty"`

	// kind of the objects, e.g. Deployment.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind,omitempty"`

	// name of the object.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// JSONPatchOperation is one RFC 6902 operation.
type JSONPatchOperation struct {
	// op is add, remove, replace, move, copy or test.
	// +required
	// +kubebuilder:validation:Enum=add;remove;replace;move;copy;test
	Op string `json:"op"`

	// path is a JSON pointer (RFC 6901), e.g. /spec/replicas.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/([^/~]|~[01])*)+$`
	Path string `json:"path"`

	// from is the source pointer of move and copy.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/([^/~]|~[01])*)+$`
	From string `json:"from,omitempty"`

	// value is the value of add, replace and test.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
}

// CELOverride sets the field at path to what expression returns. The expression sees
// `cluster` (name, labels, and allocatable cpu in millicores, memory in bytes and pods) and
// `object` (the object as rendered so far), e.g.
// `cluster.labels.region + "-registry.example.com/app:1.2"` or
// `cluster.allocatable.cpu >= 8000 ? 4 : 2`. Its cost is limited.
type CELOverride struct {
	// path is the JSON pointer of the field to set, e.g. /spec/replicas.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/([^/~]|~[01])*)+$`
	Path string `json:"path"`

	// expression is the CEL expression.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`
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

	// namespace of the Placement, for a ClusterPropagation; a Propagation uses its own. A
	// ClusterPropagation may use only a Placement in an admin namespace (flotilla-system unless
	// the hub is started with --admin-namespace): whoever may edit a Placement steers where the
	// objects using it go, or empties them, and a ClusterPropagation's objects are the cluster
	// administrators'. A Placement elsewhere gives InvalidSpec and delivers nothing.
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

	// conflict is Reject (default) or Adopt: what to do with an object that already exists on
	// a cluster without Flotilla's markers. Adopt takes it over (a Propagation can only reach
	// objects in its own namespace). An object another Flotilla owner delivered is never taken,
	// whatever this says: the first owner keeps it until it stops delivering it there or is
	// deleted, and meanwhile this owner reports Conflict naming the holder; it gets the object
	// as soon as the holder lets go.
	// +optional
	// +kubebuilder:default=Reject
	Conflict ConflictPolicy `json:"conflict,omitempty"`

	// mode is Reconcile (default: hub changes and spoke drift are acted on) or ApplyOnce
	// (objects are created when missing and never updated; drift is only reported). The
	// flotilla.dev/mode annotation on a hub object overrides it for that object.
	// +optional
	// +kubebuilder:default=Reconcile
	Mode ApplyMode `json:"mode,omitempty"`

	// drift says what happens when an object is changed or deleted on a cluster: Correct
	// (default: re-apply within a second; an object changed back after every correction is
	// corrected with backoff and reported as Fighting), Report (record it in status and an
	// Event), or Ignore. The flotilla.dev/drift annotation on a hub object overrides it for
	// that object. Values the cluster's admission sets on Flotilla's fields are not drift.
	// +optional
	// +kubebuilder:default=Correct
	Drift DriftPolicy `json:"drift,omitempty"`

	// ignoreFields lists, per kind, fields Flotilla sets on creation and then leaves to the
	// cluster, such as /spec/replicas of a Deployment scaled by an autoscaler there. An HPA
	// selected with a divided workload needs none: the workload's replicas are left to it
	// between changes of its share (the flotilla.dev/share annotation).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	IgnoreFields []IgnoreFields `json:"ignoreFields,omitempty"`

	// pruneBudgetPercent is the largest share of a cluster's delivered objects one change may
	// delete (default 50). A change that would delete more, or all of them, waits with a
	// PruneBlocked condition until the flotilla.dev/confirm-prune annotation names its revision.
	// 0 means every deletion waits for that confirmation; it never means "unlimited".
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	PruneBudgetPercent *int32 `json:"pruneBudgetPercent,omitempty"`
}

// ApplyMode says whether delivered objects are kept in their desired state.
// +kubebuilder:validation:Enum=Reconcile;ApplyOnce
type ApplyMode string

const (
	// ModeReconcile applies hub changes and acts on drift.
	ModeReconcile ApplyMode = "Reconcile"
	// ModeApplyOnce creates missing objects and never updates them.
	ModeApplyOnce ApplyMode = "ApplyOnce"
)

// DriftPolicy says what happens to an object changed on a cluster.
// +kubebuilder:validation:Enum=Correct;Report;Ignore
type DriftPolicy string

const (
	// DriftCorrect re-applies the desired state.
	DriftCorrect DriftPolicy = "Correct"
	// DriftReport records the drift in status and an Event, and leaves the object.
	DriftReport DriftPolicy = "Report"
	// DriftIgnore does nothing.
	DriftIgnore DriftPolicy = "Ignore"
)

// IgnoreFields lists fields of one kind that Flotilla does not own after creation.
type IgnoreFields struct {
	// apiVersion of the kind; empty matches every version and group.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	APIVersion string `json:"apiVersion,omitempty"`

	// kind, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`

	// paths are JSON pointers (RFC 6901), e.g. /spec/replicas.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:items:Pattern=`^(/([^/~]|~[01])*)+$`
	Paths []string `json:"paths"`
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

	// drifted is the number of objects on the cluster that differ from what Flotilla applied
	// and are left so (drift Report or Ignore, or mode ApplyOnce).
	// +optional
	Drifted int32 `json:"drifted,omitempty"`

	// driftedObjects describes the first drifted objects.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	DriftedObjects []DriftedObject `json:"driftedObjects,omitempty"`

	// fighting is the number of objects on the cluster that someone there changes back after
	// every correction Flotilla makes (strategy.drift Correct): three corrections in a row,
	// each undone within a minute. Flotilla then corrects such an object only when its
	// backoff ends (doubling from 2 seconds to at most 5 minutes), or at once when the object
	// changes on the hub; the fight is over when a correction holds for a minute.
	// +optional
	Fighting int32 `json:"fighting,omitempty"`

	// fightingObjects describes the first fighting objects: the fields changed back and the
	// field manager that changes them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	FightingObjects []DriftedObject `json:"fightingObjects,omitempty"`

	// rollout is where the cluster stands in the rollout of the latest revision (its stage,
	// state, the revision it runs and since when), when the Placement rolls revisions out;
	// absent for a cluster a person pins (spec.revisionPins), which the rollout leaves be.
	// +optional
	Rollout *ClusterRolloutState `json:"rollout,omitempty"`
}

// DriftedObject is an object changed on a cluster, or changed back after Flotilla's corrections.
type DriftedObject struct {
	// object is kind, namespace and name, e.g. deployment.apps shop/web.
	// +required
	// +kubebuilder:validation:MaxLength=600
	Object string `json:"object"`

	// fields are the JSON pointers that differ; empty when the object was deleted.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	Fields []string `json:"fields,omitempty"`

	// manager is the field manager that changed it, from the object's managedFields.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Manager string `json:"manager,omitempty"`

	// deleted is set when the object is gone from the cluster.
	// +optional
	Deleted bool `json:"deleted,omitempty"`
}

// PropagationStatus is the fleet-wide result of a Propagation. Its size is bounded: one entry
// of at most ~900 bytes per cluster, and at most 1000 entries (clusters with failures first),
// with drifted and fighting objects described for at most 10 clusters each, so it stays under
// 1 MiB at any fleet size; the counts always cover every cluster.
type PropagationStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Applied is True when every chosen cluster has every object in its desired
	// state, Ready when, in addition, every object is ready there; their reasons say what is
	// missing otherwise. Drifted is True while objects differ and are left so, Fighting while
	// someone on a cluster changes objects back after every correction, PruneBlocked while
	// deletions wait for confirmation. For kstatus, Reconciling is True while objects are on
	// their way or not ready yet, and Stalled while something stops the delivery that only a
	// change can clear (an invalid spec, a conflict, a refusal of a cluster, a confirmation);
	// neither is present otherwise.
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

	// drifted is the number of delivered objects, over all clusters, that differ from what
	// Flotilla applied and are left so.
	// +optional
	Drifted int32 `json:"drifted"`

	// clusterResults holds one entry per cluster, failures first.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	// +kubebuilder:validation:MaxItems=1000
	ClusterResults []ClusterResult `json:"clusterResults,omitempty"`

	// rollout is where the rollout of the latest revision stands, when the Placement rolls
	// revisions out (spec.rollout) and one is under way or just ended.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
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
// +kubebuilder:printcolumn:name="Drifted",type=integer,JSONPath=`.status.drifted`
// +kubebuilder:printcolumn:name="Replicas",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="ReplicasPlaced")].reason`
// +kubebuilder:printcolumn:name="Rollout",type=string,priority=1,JSONPath=`.status.rollout.phase`
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
// +kubebuilder:printcolumn:name="Drifted",type=integer,JSONPath=`.status.drifted`
// +kubebuilder:printcolumn:name="Replicas",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="ReplicasPlaced")].reason`
// +kubebuilder:printcolumn:name="Rollout",type=string,priority=1,JSONPath=`.status.rollout.phase`
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
	register(&Propagation{}, &PropagationList{}, &ClusterPropagation{}, &ClusterPropagationList{})
}
