package agent

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// apiRetryInterval is how often work the spoke refused to serve (an RGD that does not compile
// here, for want of a kind, say) is planned again with no change on the hub: installing the
// missing CRD on the spoke serves the API within about this long, as on a push cluster.
const apiRetryInterval = 5 * time.Second

// fleetAPIs serves, on the agent's spoke, the fleet APIs of the cluster's work. An item owned
// by an RGD (fleetapi.OwnerKind) names the RGD revision the hub planned for the cluster (its
// pin or rollout hold included) and resolves to that RGD, with the hub's tenancy
// (fleetapi.AnnotationTenancy). It is compiled against this spoke's schemas with the hub's
// own compile path (fleetapi.Spoke), and its CRD is the owner's job, delivered and removed as
// every owner's (book.go). Once the deliverer reports that CRD complete and Established, the
// kind is served to the instances controller (internal/instances), engaged on this spoke
// alone, which expands its instances here with kro's semantics. An item that may not be
// served here is reported with its reason and keeps what the spoke served, its instances
// still expanded with the graph served before (while the agent runs). Not safe for concurrent
// use: the agent's loop owns it (the instances controller reads the graphs, which are).
type fleetAPIs struct {
	cluster string
	spoke   *fleetapi.Spoke
	graphs  *instances.Memory
	ctl     *instances.Controller
	// planned is each RGD's latest revision that compiled here and was submitted: its graph,
	// served once its CRD is.
	planned map[render.Owner]plannedAPI
	// served is the kind each RGD serves here now.
	served map[render.Owner]schema.GroupVersionKind
	// refused are the items that may not be served here now, as the result to report.
	refused map[render.Owner]clusterwork.Result
	retryAt time.Time
}

type plannedAPI struct {
	digest string
	graph  instances.Graph
}

func newFleetAPIs(name string, cl cluster.Cluster) *fleetAPIs {
	return &fleetAPIs{cluster: name, spoke: fleetapi.NewSpoke(name, cl), graphs: instances.NewMemory(),
		planned: map[render.Owner]plannedAPI{}, served: map[render.Owner]schema.GroupVersionKind{},
		refused: map[render.Owner]clusterwork.Result{}}
}

// start runs the instances controller on the spoke, through d, until ctx ends.
func (f *fleetAPIs) start(ctx context.Context, d *deliver.Deliverer, cl cluster.Cluster) error {
	f.ctl = instances.New(f.graphs, d, instances.Options{})
	if err := f.ctl.Engage(ctx, multicluster.ClusterName(f.cluster), cl); err != nil {
		return fmt.Errorf("the instances of fleet APIs on the spoke: %w", err)
	}
	go func() { _ = f.ctl.Start(ctx) }()
	return nil
}

// notify routes a delivery result of an instance (an owner on the spoke) to the instances
// controller; it reports whether it was one.
func (f *fleetAPIs) notify(owner render.Owner) bool {
	if !owner.OnSpoke() {
		return false
	}
	if f != nil && f.ctl != nil {
		f.ctl.Notify(owner)
	}
	return true
}

// isFleetAPI reports whether an owner of the work is an RGD served as an API.
func isFleetAPI(owner render.Owner) bool { return owner.Kind == fleetapi.OwnerKind && !owner.OnSpoke() }

// job makes an RGD's item into its CRD's job, compiled here; an item that may not be served
// here is an error, and its result is reported (refusals).
func (f *fleetAPIs) job(ctx context.Context, owner render.Owner, item clusterwork.Item) (deliver.Job, error) {
	w := fleetapi.SpokeWork{Owner: owner, Revision: item.Revision, Digest: item.Digest, Objects: item.Objects}
	if item.Strategy != nil {
		w.Deletion = item.Strategy.Deletion
	}
	plan := f.spoke.Plan(ctx, f.cluster, w)
	if plan.Job == nil {
		f.refused[owner] = clusterwork.Result{Record: item.Record, Revision: item.Digest, Reason: plan.Reason, Message: plan.Message}
		return deliver.Job{}, fmt.Errorf("not served on this spoke (%s): %s", plan.Reason, plan.Message)
	}
	delete(f.refused, owner)
	f.planned[owner] = plannedAPI{digest: item.Digest, graph: plan.Graph}
	return *plan.Job, nil
}

// serve serves the graph of each RGD whose CRD the deliverer reports complete and Established
// at its planned revision.
func (f *fleetAPIs) serve(d *deliver.Deliverer) {
	for owner, p := range f.planned {
		res, ok := d.Result(owner, f.cluster)
		if !ok || res.Revision != p.digest || !res.Complete || res.Ready < res.Applied {
			continue
		}
		if kind, ok := f.served[owner]; ok && kind != p.graph.Kind() {
			f.graphs.Unserve(f.cluster, kind) // the RGD serves another kind now
		}
		f.served[owner] = p.graph.Kind()
		f.graphs.Serve(f.cluster, p.graph) // the same graph again changes nothing
	}
}

// forget stops serving an RGD removed from the spoke (its CRD released or deleted): its
// instances are no longer expanded; nothing of them is deleted.
func (f *fleetAPIs) forget(owner render.Owner) {
	if kind, ok := f.served[owner]; ok {
		f.graphs.Unserve(f.cluster, kind)
	}
	delete(f.served, owner)
	delete(f.planned, owner)
	delete(f.refused, owner)
}

// refusals are the results of the items refused now, by record.
func (f *fleetAPIs) refusals() map[string]clusterwork.Result {
	out := make(map[string]clusterwork.Result, len(f.refused))
	for _, r := range f.refused {
		out[r.Record] = r
	}
	return out
}

// retryDue reports whether refused items are to be planned again now.
func (f *fleetAPIs) retryDue(now time.Time) bool {
	if len(f.refused) == 0 || now.Before(f.retryAt) {
		return false
	}
	f.retryAt = now.Add(apiRetryInterval)
	return true
}

// serveAPIs serves the fleet APIs whose CRDs are ready, and has the next poll read the whole
// work again when refused items are due to be planned again (the deliverer skips what it
// delivered already).
func (a *Agent) serveAPIs() {
	a.apis.serve(a.d)
	for owner := range a.apis.refused {
		if h := a.book.owners[owner]; h == nil || !h.missing.IsZero() {
			delete(a.apis.refused, owner) // the hub no longer lists it: nothing to report or retry
		}
	}
	if a.apis.retryDue(time.Now()) {
		a.etag = ""
	}
}

// unsentRefusals are the refusals not posted yet, as posted.
func (a *Agent) unsentRefusals(refusals map[string]clusterwork.Result) []clusterwork.Result {
	var out []clusterwork.Result
	for rec, r := range refusals {
		if prev, ok := a.sent[rec]; ok && prev == r {
			continue
		}
		out = append(out, r)
	}
	return out
}
