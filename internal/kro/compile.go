package kro

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/google/cel-go/cel"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	krocel "github.com/kubernetes-sigs/kro/pkg/cel"
	"github.com/kubernetes-sigs/kro/pkg/graph"
	"github.com/kubernetes-sigs/kro/pkg/graph/hash"
)

// Config holds kro's limits on forEach collections, and Flotilla's on what evaluating an
// instance's CEL may cost (limits.go).
type Config struct {
	MaxCollectionSize          int
	MaxCollectionDimensionSize int
	// CELCostLimit is what one evaluation of one expression may cost (cel-go's cost units);
	// CELCostBudget what all the expressions of one evaluation of an instance may. Zero is
	// the default.
	CELCostLimit  uint64
	CELCostBudget uint64
}

// DefaultConfig is kro's controller default, with Kubernetes' CEL cost limits.
func DefaultConfig() Config {
	return Config{MaxCollectionSize: DefaultMaxCollectionSize, MaxCollectionDimensionSize: DefaultMaxCollectionDimensionSize,
		CELCostLimit: DefaultCELCostLimit, CELCostBudget: DefaultCELCostBudget}
}

// withDefaults fills the CEL limits left zero.
func (c Config) withDefaults() Config {
	if c.CELCostLimit == 0 {
		c.CELCostLimit = DefaultCELCostLimit
	}
	if c.CELCostBudget == 0 {
		c.CELCostBudget = DefaultCELCostBudget
	}
	return c
}

func (c Config) graphConfig() graph.Config {
	return graph.Config{MaxCollectionSize: c.MaxCollectionSize, MaxCollectionDimensionSize: c.MaxCollectionDimensionSize}
}

// Compiled is an RGD compiled against one cluster: the CRD to serve there and the graph its
// instances are evaluated with (Evaluate). It is immutable and safe for concurrent use; compiled
// CEL programs are shared by every evaluation.
type Compiled struct {
	graph  *graph.Graph
	config Config
	// limited are the graph's expressions compiled with the CEL cost limit (limits.go).
	limited     map[*krocel.Expression]cel.Program
	crd         *extv1.CustomResourceDefinition
	labels      map[string]string
	specHash    string
	instanceGVK schema.GroupVersionKind
	nodes       []NodeInfo
	// scopes maps the graph's kinds to their scope on the target, for the ApplySet inventory.
	scopes meta.RESTMapper
}

// NodeInfo describes one resource of a compiled graph.
type NodeInfo struct {
	ID         string
	Type       NodeType
	Kind       schema.GroupVersionKind
	Resource   schema.GroupVersionResource
	Namespaced bool // as the target cluster maps the kind
	// ApplyOrder is the node's deletion wave (one-based; the highest is removed first).
	ApplyOrder int
	// Dependencies are the ids of the resources the node's expressions read, sorted.
	Dependencies []string
}

// NodeType is a resource's kind of node in kro's graph.
type NodeType string

const (
	NodeResource           NodeType = "Resource"           // one templated object
	NodeCollection         NodeType = "Collection"         // forEach: zero or more objects
	NodeExternal           NodeType = "External"           // externalRef by name: read, never written
	NodeExternalCollection NodeType = "ExternalCollection" // externalRef by selector: read, never written
)

// Compile compiles rgd against target with kro's graph builder: SimpleSchema to the instance
// CRD, every template checked against the target's schema of its kind, CEL type-checked, the
// dependency order derived and the status schema inferred. rgd is not modified.
//
// A kind the target does not serve is a *SchemaNotFoundError; a graph kro rejects is an
// *InvalidGraphError; a failure to read the target is a *TargetError.
func Compile(rgd *ResourceGraphDefinition, target Target, cfg Config) (*Compiled, error) {
	if target.Schemas == nil || target.Mapper == nil {
		return nil, errors.New("kro: a target needs both schemas and a REST mapper")
	}
	if rgd.Spec.Schema == nil {
		return nil, &InvalidGraphError{Err: errors.New("spec.schema is required")}
	}
	rgd = rgd.DeepCopy()
	// The hub's API server defaults the group from kro's CRD; an RGD read from a file has none.
	if rgd.Spec.Schema.Group == "" {
		rgd.Spec.Schema.Group = v1alpha1.KRODomainName
	}

	watch := &watchedTarget{target: target}
	// Given a resolver and a mapper, the builder dials nothing: no config, no client.
	builder, err := graph.NewBuilder(nil, nil, graph.WithSchemaResolver(watch), graph.WithRESTMapper(watch))
	if err != nil {
		return nil, fmt.Errorf("kro graph builder: %w", err)
	}
	g, err := builder.NewResourceGraphDefinition(rgd, cfg.graphConfig())
	if err != nil {
		return nil, watch.classify(rgd, err)
	}
	cfg = cfg.withDefaults()
	limited, err := limitedPrograms(g, cfg.CELCostLimit)
	if err != nil {
		return nil, &InvalidGraphError{Err: fmt.Errorf("compile with CEL cost limits: %w", err)}
	}
	specHash, err := hash.Spec(rgd.Spec)
	if err != nil {
		return nil, fmt.Errorf("hash of the RGD spec: %w", err)
	}

	labels := rgdLabels(rgd)
	crd := g.CRD.DeepCopy()
	crdLabels := crd.GetLabels()
	if crdLabels == nil {
		crdLabels = map[string]string{}
	}
	maps.Copy(crdLabels, labels)
	crd.SetLabels(crdLabels)

	c := &Compiled{
		graph:    g,
		config:   cfg,
		limited:  limited,
		crd:      crd,
		labels:   labels,
		specHash: specHash,
		instanceGVK: schema.GroupVersionKind{
			Group: rgd.Spec.Schema.Group, Version: rgd.Spec.Schema.APIVersion, Kind: rgd.Spec.Schema.Kind,
		},
	}
	for _, id := range g.TopologicalOrder {
		n := g.Nodes[id]
		// kro collects dependencies from a map: sort them, so that equal graphs compare equal.
		deps := slices.Clone(n.Meta.Dependencies)
		slices.Sort(deps)
		c.nodes = append(c.nodes, NodeInfo{
			ID:           id,
			Type:         nodeType(n.Meta.Type),
			Kind:         n.Template.GroupVersionKind(),
			Resource:     n.Meta.GVR,
			Namespaced:   n.Meta.Namespaced,
			ApplyOrder:   g.ApplyOrders[id],
			Dependencies: deps,
		})
	}
	c.scopes = scopeMapper(c.nodes)
	return c, nil
}

// CRD is the generated CRD, labelled as kro labels it: kro.run/owned, kro.run/kro-version and
// the RGD's name and uid. It is a copy.
func (c *Compiled) CRD() *extv1.CustomResourceDefinition { return c.crd.DeepCopy() }

// InstanceKind is the kind of the instances (the CRD's group, version and kind).
func (c *Compiled) InstanceKind() schema.GroupVersionKind { return c.instanceGVK }

// InstanceResource is the instances' resource on the cluster.
func (c *Compiled) InstanceResource() schema.GroupVersionResource { return c.graph.Instance.Meta.GVR }

// Namespaced reports whether instances are namespaced.
func (c *Compiled) Namespaced() bool { return c.graph.Instance.Meta.Namespaced }

// InstanceLabels are the labels kro puts on every instance of the RGD (the same as the CRD's).
func (c *Compiled) InstanceLabels() map[string]string { return maps.Clone(c.labels) }

// SpecHash identifies the RGD spec the graph was compiled from (kro's revision hash): two
// compiles with the same hash and the same target schemas give the same graph.
func (c *Compiled) SpecHash() string { return c.specHash }

// TopologicalOrder is the order resources are evaluated and applied in.
func (c *Compiled) TopologicalOrder() []string { return slices.Clone(c.graph.TopologicalOrder) }

// Nodes describes the resources in topological order.
func (c *Compiled) Nodes() []NodeInfo {
	out := slices.Clone(c.nodes)
	for i := range out {
		out[i].Dependencies = slices.Clone(out[i].Dependencies)
	}
	return out
}

// HasAuthorConditions reports whether the RGD declares status.conditions, which then replace
// kro's own conditions on instances.
func (c *Compiled) HasAuthorConditions() bool { return len(c.graph.Instance.Conditions) > 0 }

func nodeType(t graph.NodeType) NodeType {
	switch t {
	case graph.NodeTypeCollection:
		return NodeCollection
	case graph.NodeTypeExternal:
		return NodeExternal
	case graph.NodeTypeExternalCollection:
		return NodeExternalCollection
	default:
		return NodeResource
	}
}

// watchedTarget passes the builder's lookups to a Target and remembers the first that failed,
// so that a compile error can name the kind and tell a missing kind from an unreadable cluster.
type watchedTarget struct {
	meta.RESTMapper // only RESTMapping is used by kro's builder; it is overridden below
	target          Target

	mu       sync.Mutex
	failed   schema.GroupVersionKind
	failure  error
	hasError bool
}

var _ resolver.SchemaResolver = (*watchedTarget)(nil)

func (w *watchedTarget) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	s, err := w.target.Schemas.ResolveSchema(gvk)
	w.record(gvk, err)
	return s, err
}

func (w *watchedTarget) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m, err := w.target.Mapper.RESTMapping(gk, versions...)
	gvk := gk.WithVersion("")
	if len(versions) > 0 {
		gvk.Version = versions[0]
	}
	w.record(gvk, err)
	return m, err
}

func (w *watchedTarget) record(gvk schema.GroupVersionKind, err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.hasError {
		w.failed, w.failure, w.hasError = gvk, err, true
	}
}

// classify turns a builder error into one of the package's typed errors.
func (w *watchedTarget) classify(rgd *ResourceGraphDefinition, err error) error {
	w.mu.Lock()
	failed, failure, hasError := w.failed, w.failure, w.hasError
	w.mu.Unlock()
	switch {
	case hasError && isMissingKind(failure) && errors.Is(err, failure):
		return &SchemaNotFoundError{ResourceID: resourceWithKind(rgd, failed), Kind: failed, Err: err}
	case hasError && errors.Is(err, failure):
		return &TargetError{Err: err}
	default:
		return &InvalidGraphError{Err: err}
	}
}

// resourceWithKind names the first resource of rgd whose kind is gvk: kro builds resources in
// order and stops at the first failure.
func resourceWithKind(rgd *ResourceGraphDefinition, gvk schema.GroupVersionKind) string {
	for _, r := range rgd.Spec.Resources {
		k, ok := kindOf(r)
		if !ok || k.Kind != gvk.Kind || k.Group != gvk.Group {
			continue
		}
		if gvk.Version == "" || k.Version == gvk.Version {
			return r.ID
		}
	}
	return ""
}
