package kro

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/rest"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	"github.com/kubernetes-sigs/kro/pkg/apis"
	"github.com/kubernetes-sigs/kro/pkg/cel/library"
	instancectrl "github.com/kubernetes-sigs/kro/pkg/controller/instance"
	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
	"github.com/kubernetes-sigs/kro/pkg/graph"
	"github.com/kubernetes-sigs/kro/pkg/graph/crd/compat"
	"github.com/kubernetes-sigs/kro/pkg/graph/hash"
	"github.com/kubernetes-sigs/kro/pkg/metadata"
	kroruntime "github.com/kubernetes-sigs/kro/pkg/runtime"
)

// The parts of kro's API this package relies on, with their exact signatures and fields. kro
// does not document them as a stable API (they moved between v0.9.3 and v0.9.4): if an upgrade
// changes one, this file stops compiling, and the adapter must be reviewed, not just rebuilt.
var (
	// Compile: the graph builder, given a resolver and a mapper, and the revision hash.
	_ func(*rest.Config, *http.Client, ...graph.BuilderOption) (*graph.Builder, error)            = graph.NewBuilder
	_ func(resolver.SchemaResolver) graph.BuilderOption                                           = graph.WithSchemaResolver
	_ func(meta.RESTMapper) graph.BuilderOption                                                   = graph.WithRESTMapper
	_ func(*graph.Builder, *v1alpha1.ResourceGraphDefinition, graph.Config) (*graph.Graph, error) = (*graph.Builder).NewResourceGraphDefinition
	_ func(v1alpha1.ResourceGraphDefinitionSpec) (string, error)                                  = hash.Spec
	_                                                                                             = graph.Config{MaxCollectionSize: 0, MaxCollectionDimensionSize: 0}
	_                                                                                             = graph.Graph{
		Instance: (*graph.Node)(nil), Nodes: map[string]*graph.Node(nil), TopologicalOrder: []string(nil),
		ApplyOrders: map[string]int(nil), CRD: (*extv1.CustomResourceDefinition)(nil),
	}
	_ = graph.Node{Meta: graph.NodeMeta{
		ID: "", Type: graph.NodeTypeResource, GVR: schema.GroupVersionResource{}, Namespaced: false, Dependencies: []string(nil),
	}, Template: (*unstructured.Unstructured)(nil)}
	_ = []graph.NodeType{graph.NodeTypeResource, graph.NodeTypeCollection, graph.NodeTypeExternal, graph.NodeTypeExternalCollection}

	// Evaluate: the runtime, node by node.
	_ func(*graph.Graph, graph.Config, ...kroruntime.Option) (*kroruntime.Runtime, error)          = kroruntime.FromGraph
	_ func(*unstructured.Unstructured) kroruntime.Option                                           = kroruntime.WithInstance
	_ func(*kroruntime.Runtime) []*kroruntime.Node                                                 = (*kroruntime.Runtime).Nodes
	_ func(*kroruntime.Runtime) *kroruntime.Node                                                   = (*kroruntime.Runtime).Instance
	_ func(*kroruntime.Runtime, string) (int, bool)                                                = (*kroruntime.Runtime).ApplyOrder
	_ func(*kroruntime.Node) (bool, error)                                                         = (*kroruntime.Node).IsIgnored
	_ func(*kroruntime.Node) ([]*unstructured.Unstructured, error)                                 = (*kroruntime.Node).GetDesired
	_ func(*kroruntime.Node, []*unstructured.Unstructured)                                         = (*kroruntime.Node).SetObserved
	_ func(*kroruntime.Node) error                                                                 = (*kroruntime.Node).CheckReadiness
	_ func(*kroruntime.Node) bool                                                                  = (*kroruntime.Node).HasConditions
	_ func(*kroruntime.Node, logr.Logger, []v1alpha1.Condition) ([]library.Condition, bool, error) = (*kroruntime.Node).EvaluateConditions
	_ func(error) bool                                                                             = kroruntime.IsDataPending
	_ error                                                                                        = kroruntime.ErrWaitingForReadiness
	_                                                                                              = kroruntime.Node{Spec: (*graph.Node)(nil)}

	// Status: kro's instance state machine and condition markers.
	_                                                                  = instancectrl.StateManager{State: v1alpha1.InstanceStateInProgress, NodeStates: map[string]*instancectrl.NodeState{}}
	_                                                                  = instancectrl.NodeState{State: v1alpha1.NodeStateSynced, Err: error(nil)}
	_ func(*instancectrl.StateManager)                                 = (*instancectrl.StateManager).Update
	_ func(*instancectrl.StateManager, string, instancectrl.NodeState) = (*instancectrl.StateManager).SetNodeState
	_ func(*unstructured.Unstructured) *instancectrl.ConditionsMarker  = instancectrl.NewConditionsMarkerFor
	_ func(*instancectrl.ConditionsMarker)                             = (*instancectrl.ConditionsMarker).InstanceManaged
	_ func(*instancectrl.ConditionsMarker, string, ...any)             = (*instancectrl.ConditionsMarker).InstanceNotManaged
	_ func(*instancectrl.ConditionsMarker)                             = (*instancectrl.ConditionsMarker).GraphResolved
	_ func(*instancectrl.ConditionsMarker)                             = (*instancectrl.ConditionsMarker).ResourcesReady
	_ func(*instancectrl.ConditionsMarker, string, ...any)             = (*instancectrl.ConditionsMarker).ResourcesNotReady
	_ func(*instancectrl.ConditionsMarker, string, ...any)             = (*instancectrl.ConditionsMarker).ResourcesDeleting
	_ func(*instancectrl.ConditionsMarker, string, ...any)             = (*instancectrl.ConditionsMarker).ReconciliationSuspended
	_ func(...string) apis.ConditionTypes                              = apis.NewReadyConditions
	_ func(apis.ConditionTypes, apis.Object) apis.ConditionSet         = apis.ConditionTypes.For
	_ func(string) bool                                                = v1alpha1.IsReconcileSuspended
	_                                                                  = []string{instancectrl.InstanceManaged, instancectrl.GraphResolved, instancectrl.ResourcesReady}

	// Contract: labels and the ApplySet inventory.
	_ func(metav1.Object) metadata.GenericLabeler                    = metadata.NewResourceGraphDefinitionLabeler
	_ func(*unstructured.Unstructured, bool) metadata.GenericLabeler = metadata.NewInstanceLabeler
	_ func() metadata.GenericLabeler                                 = metadata.NewNodeLabeler
	_ func(metav1.ObjectMeta, metav1.ObjectMeta) (bool, bool, bool)  = metadata.CompareRGDOwnership
	_ func(string, string, string) schema.GroupVersionResource       = metadata.GetResourceGraphDefinitionInstanceGVR
	_ func(interface {
		metav1.Object
		schema.ObjectKind
	}) string = applyset.ID
	_ func(applyset.Config, interface {
		metav1.Object
		schema.ObjectKind
	}) *applyset.ApplySet = applyset.New
	_ func(*applyset.ApplySet, []applyset.Resource) (applyset.Metadata, error) = (*applyset.ApplySet).Project
	_ func(applyset.Metadata) map[string]string                                = applyset.Metadata.Annotations
	// Its parameter is an unexported interface type, so the call is what is pinned.
	_       = func(instance *unstructured.Unstructured) error { return applyset.ValidateParentInventory(instance) }
	_       = applyset.Config{RESTMapper: meta.RESTMapper(nil), ParentNamespace: ""}
	_       = applyset.Resource{ID: "", Object: (*unstructured.Unstructured)(nil), Current: (*unstructured.Unstructured)(nil), SkipApply: false}
	_       = applyset.Metadata{ID: "", Tooling: ""}
	_       = applyset.ApplySetConflictError{ResourceName: "", ResourceNamespace: "", ResourceGVK: "", CurrentApplySetID: "", DesiredApplySetID: ""}
	_ error = applyset.ErrDuplicateResource

	// CRD compatibility.
	_ func([]extv1.CustomResourceDefinitionVersion, []extv1.CustomResourceDefinitionVersion) (*compat.Report, error) = compat.CompareVersions
	_ func(*compat.Report) bool                                                                                      = (*compat.Report).HasChanges
	_ func(compat.Change) string                                                                                     = compat.Change.Description
)

// TestPinnedVersion fails when the build selects another kro than Version, or a replacement:
// the contract labels and the tooling annotation name Version, and the assertions above
// describe that release. (A test binary carries no dependency build information, so the go
// command reports what this package is built with.)
func TestPinnedVersion(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{with .Replace}}{{.Path}}@{{.Version}}{{end}}", ModulePath).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", ModulePath, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 || fields[0] != Version {
		t.Fatalf("the build selects %s %q, but internal/kro is written for %s: review the adapter (pin_test.go) and update Version", ModulePath, out, Version)
	}
	if len(fields) > 1 {
		t.Fatalf("%s is replaced by %s: Flotilla uses kro unpatched", ModulePath, fields[1])
	}
}

// TestKroNamesTheMainModulesVersion documents why Version exists: kro's own labeler and
// ApplySet tooling report the version of the binary's main module. If this starts failing, kro
// reports its own version and the overrides can go.
func TestKroNamesTheMainModulesVersion(t *testing.T) {
	if got := metadata.NewKROMetaLabeler()[metadata.KROVersionLabel]; got == Version {
		t.Errorf("kro's labeler now says %q by itself", got)
	}
	if got := applyset.ToolingID(); got == ToolingID || !strings.HasPrefix(got, "kro/") {
		t.Errorf("kro's tooling id is %q", got)
	}
}

// TestContractKeys pins the keys a spoke-local kro, kubectl and dashboards read: renaming one
// in kro would silently split ownership between kro and Flotilla.
func TestContractKeys(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	metadata.SetInstanceFinalizer(obj)
	keys := map[string]string{
		Finalizer:                       "kro.run/finalizer",
		obj.GetFinalizers()[0]:          "kro.run/finalizer",
		OwnedLabel:                      "kro.run/owned",
		VersionLabel:                    "kro.run/kro-version",
		RGDIDLabel:                      "kro.run/resource-graph-definition-id",
		RGDNameLabel:                    "kro.run/resource-graph-definition-name",
		ManagedByLabel:                  "app.kubernetes.io/managed-by",
		InstanceIDLabel:                 "kro.run/instance-id",
		InstanceNameLabel:               "kro.run/instance-name",
		InstanceNamespaceLabel:          "kro.run/instance-namespace",
		InstanceGroupLabel:              "kro.run/instance-group",
		InstanceVersionLabel:            "kro.run/instance-version",
		InstanceKindLabel:               "kro.run/instance-kind",
		NodeIDLabel:                     "kro.run/node-id",
		CollectionIndexLabel:            "kro.run/collection-index",
		CollectionSizeLabel:             "kro.run/collection-size",
		ApplyOrderAnnotation:            "internal.kro.run/apply-order",
		ApplySetIDLabel:                 "applyset.kubernetes.io/id",
		ApplySetPartOfLabel:             "applyset.kubernetes.io/part-of",
		ApplySetToolingAnnotation:       "applyset.kubernetes.io/tooling",
		ApplySetGroupKindsAnnotation:    "applyset.kubernetes.io/contains-group-kinds",
		ApplySetNamespacesAnnotation:    "applyset.kubernetes.io/additional-namespaces",
		ApplySetInventoryHashAnnotation: "internal.kro.run/applyset-inventory-hash",
		AllowBreakingChangesAnnotation:  "kro.run/allow-breaking-changes",
		ReconcileAnnotation:             "kro.run/reconcile",
	}
	for got, want := range keys {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
	if !v1alpha1.IsReconcileSuspended(ReconcileSuspendedAnnotationValue) {
		t.Errorf("%q does not suspend", ReconcileSuspendedAnnotationValue)
	}
}

// TestOnlyThisPackageImportsKro keeps kro behind this adapter: another package importing kro
// would escape the pin above.
func TestOnlyThisPackageImportsKro(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/flotilla-dev/flotilla/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	self := "github.com/flotilla-dev/flotilla/internal/kro"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], self) {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, ModulePath+"/") {
				t.Errorf("%s imports %s: use internal/kro", fields[0], imp)
			}
		}
	}
}
