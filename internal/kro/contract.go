package kro

import (
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
	"github.com/kubernetes-sigs/kro/pkg/metadata"
)

// ResourceGraphDefinition is kro's own API type (kro.run/v1alpha1), re-exported so that the rest
// of Flotilla never imports kro.
type (
	ResourceGraphDefinition     = v1alpha1.ResourceGraphDefinition
	ResourceGraphDefinitionList = v1alpha1.ResourceGraphDefinitionList
	Schema                      = v1alpha1.Schema
)

// GroupVersion is kro.run/v1alpha1.
var GroupVersion = v1alpha1.GroupVersion

// AddToScheme registers kro's ResourceGraphDefinition types.
func AddToScheme(s *runtime.Scheme) error { return v1alpha1.AddToScheme(s) }

// The keys of kro's observable contract on a spoke: the labels, annotations and finalizer a
// spoke-local kro, kubectl and dashboards expect on generated CRDs, instances and children.
const (
	// Finalizer holds an instance until its children are removed.
	Finalizer = v1alpha1.KRODomainName + "/finalizer"

	OwnedLabel     = metadata.OwnedLabel      // "true" on everything kro manages
	VersionLabel   = metadata.KROVersionLabel // the kro release that wrote the object
	RGDIDLabel     = metadata.ResourceGraphDefinitionIDLabel
	RGDNameLabel   = metadata.ResourceGraphDefinitionNameLabel
	ManagedByLabel = metadata.ManagedByLabelKey // app.kubernetes.io/managed-by on children
	ManagedByValue = metadata.ManagedByKROValue

	InstanceIDLabel        = metadata.InstanceIDLabel
	InstanceNameLabel      = metadata.InstanceLabel
	InstanceNamespaceLabel = metadata.InstanceNamespaceLabel
	InstanceGroupLabel     = metadata.InstanceGroupLabel
	InstanceVersionLabel   = metadata.InstanceVersionLabel
	InstanceKindLabel      = metadata.InstanceKindLabel

	NodeIDLabel          = metadata.NodeIDLabel
	CollectionIndexLabel = metadata.CollectionIndexLabel
	CollectionSizeLabel  = metadata.CollectionSizeLabel
	// ApplyOrderAnnotation is a child's deletion wave: the highest wave is removed first.
	ApplyOrderAnnotation = metadata.ApplyOrderAnnotation

	// ApplySet (KEP-3659) metadata: the instance is the parent, children carry PartOfLabel.
	ApplySetIDLabel                   = applyset.ApplySetParentIDLabel
	ApplySetPartOfLabel               = applyset.ApplysetPartOfLabel
	ApplySetToolingAnnotation         = applyset.ApplySetToolingAnnotation
	ApplySetGroupKindsAnnotation      = applyset.ApplySetGKsAnnotation
	ApplySetNamespacesAnnotation      = applyset.ApplySetAdditionalNamespacesAnnotation
	ApplySetInventoryHashAnnotation   = applyset.ApplySetInventoryHashAnnotation
	AllowBreakingChangesAnnotation    = v1alpha1.AllowBreakingChangesAnnotation
	ReconcileAnnotation               = v1alpha1.InstanceReconcileAnnotation
	ReconcileSuspendedAnnotationValue = "suspended"
)

// Instance states, as kro writes them to status.state.
const (
	StateInProgress = string(v1alpha1.InstanceStateInProgress)
	StateActive     = string(v1alpha1.InstanceStateActive)
	StateError      = string(v1alpha1.InstanceStateError)
	StateDeleting   = string(v1alpha1.InstanceStateDeleting)
)

// ApplySetID is the ApplySet id of an instance: what its children carry in ApplySetPartOfLabel,
// whoever applied them (kro on the cluster, or Flotilla from the hub).
func ApplySetID(instance *unstructured.Unstructured) string { return applyset.ID(instance) }

// metaLabels are the labels kro puts on everything it manages, with the pinned version
// (kro's own labeler would name the main module's version).
func metaLabels() metadata.GenericLabeler {
	return metadata.GenericLabeler{OwnedLabel: "true", VersionLabel: Version}
}

// rgdLabels are the labels of a generated CRD and of every instance of it: kro's labels plus
// the RGD's name and uid.
func rgdLabels(rgd *ResourceGraphDefinition) map[string]string {
	labels := metaLabels().Copy()
	maps.Copy(labels, metadata.NewResourceGraphDefinitionLabeler(rgd))
	return labels
}

// decorateChild adds the labels and annotation kro puts on a child, in kro's order: the
// instance's identity, managed-by, kro's own labels, the node id, collection position, the
// ApplySet membership, and the deletion wave.
func decorateChild(obj, instance *unstructured.Unstructured, namespaced bool, nodeID string, applyOrder int, item *collectionItem, applySetID string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, metadata.NewInstanceLabeler(instance, namespaced))
	maps.Copy(labels, metadata.NewNodeLabeler())
	maps.Copy(labels, metaLabels())
	labels[NodeIDLabel] = nodeID
	if item != nil {
		labels[CollectionIndexLabel] = strconv.Itoa(item.index)
		labels[CollectionSizeLabel] = strconv.Itoa(item.size)
	}
	labels[ApplySetPartOfLabel] = applySetID
	obj.SetLabels(labels)

	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ApplyOrderAnnotation] = strconv.Itoa(applyOrder)
	obj.SetAnnotations(annotations)
}

// collectionItem is a forEach item's position in its collection.
type collectionItem struct{ index, size int }
