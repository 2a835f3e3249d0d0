package fleetapi

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Spoke serves RGD revisions on the one spoke it runs on: what a pull cluster's agent does with
// the revision its work names (pull.go). It plans with the controller's own planOn, reading
// the spoke through the agent's engagement instead of the hub's: the same schema views and
// compile cache, kro's rules for replacing a served CRD, the same CRD with the same markers.
// It is safe for concurrent use.
type Spoke struct {
	r    *Reconciler
	view spokeView
}

// NewSpoke returns a Spoke planning on cl, the cluster named name on the hub (the agent's
// engagement of its spoke: its cache holds what Flotilla delivered).
func NewSpoke(name string, cl cluster.Cluster) *Spoke {
	schemas := newSnapshots()
	return &Spoke{
		r: &Reconciler{compiles: newCompiles()},
		view: spokeView{name: name, delivered: cl.GetCache(), live: cl.GetAPIReader(),
			schemas: func() (*snapshot, error) { return schemas.get(name, cl) }},
	}
}

// SpokeWork is one RGD item of a pull cluster's work: the kept revision it names, the digest to
// report, the objects it resolves to (the RGD as the hub wants it served here), and the
// removal policy.
type SpokeWork struct {
	Owner    render.Owner
	Revision string
	Digest   string
	Objects  []*unstructured.Unstructured
	Deletion flotillav1.DeletionPolicy
}

// SpokePlan is what serving an RGD revision on the spoke takes: the CRD's job and the graph
// its instances are expanded with once the CRD is Established; or, when it may not be served
// here, why (Reason is the row's reason on the hub: CompileFailed, SchemaNotFound,
// BreakingChange, Conflict, InvalidSpec) and what the spoke keeps meanwhile is what it
// served.
type SpokePlan struct {
	Job   *deliver.Job
	Graph instances.Graph
	// Kind is the kind the RGD serves (also when it is refused).
	Kind            schema.GroupVersionKind
	Reason, Message string
}

// Plan compiles the RGD of w against the spoke's schemas and decides whether its CRD may be
// delivered, as the hub decides for the clusters it reaches.
func (s *Spoke) Plan(ctx context.Context, cluster string, w SpokeWork) SpokePlan {
	rgd, wide, err := rgdOfWork(w)
	if err != nil {
		return SpokePlan{Reason: flotillav1.ReasonInvalidSpec, Message: limit(err.Error())}
	}
	out := SpokePlan{Kind: kro.InstanceKind(rgd)}
	rev := rgdRevision{name: w.Revision, rgd: rgd}
	p := s.r.planRead(ctx, readOn(ctx, s.view, rev, w.Owner), rev, w.Owner, "", pullPass{})
	if p.want == nil {
		out.Reason, out.Message = p.row.Reason, p.row.Message
		if out.Reason == "" {
			out.Reason = flotillav1.ReasonApplyFailed
		}
		return out
	}
	out.Job = &deliver.Job{Owner: w.Owner, Cluster: cluster, Objects: p.want.Objects, Revision: w.Digest, Prune: true,
		PruneKinds: []schema.GroupVersionKind{crdKind}, Strategy: crdStrategy(rgd.Name, w.Deletion, "", "")}
	out.Graph = instances.Graph{Compiled: p.compiled, Revision: strconv.FormatInt(rgd.Generation, 10), ClusterWide: wide}
	return out
}

// rgdOfWork reads the one RGD a work item resolves to, which must be its owner's, and the
// tenancy the hub serves it with.
func rgdOfWork(w SpokeWork) (*kro.ResourceGraphDefinition, bool, error) {
	if len(w.Objects) != 1 {
		return nil, false, fmt.Errorf("the work of %s holds %d objects, not one ResourceGraphDefinition", w.Owner, len(w.Objects))
	}
	o := w.Objects[0]
	if gvk := o.GroupVersionKind(); gvk.Group != kroGroup || gvk.Kind != rgdKind || o.GetName() != w.Owner.Name {
		return nil, false, fmt.Errorf("the work of %s holds %s %s, not the ResourceGraphDefinition %s", w.Owner, gvk.Kind, o.GetName(), w.Owner.Name)
	}
	rgd := &kro.ResourceGraphDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, rgd); err != nil {
		return nil, false, fmt.Errorf("the ResourceGraphDefinition %s of the work: %w", w.Owner.Name, err)
	}
	return rgd, o.GetAnnotations()[AnnotationTenancy] == string(flotillav1.TenancyCluster), nil
}
