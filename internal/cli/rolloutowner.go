package cli

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/propagation"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// rolloutOwner is an owner whose revisions roll out stage by stage, as `flotilla rollout`
// steers it: one implementation per kind (a Propagation or ClusterPropagation, a
// transparent-mode object, an RGD).
type rolloutOwner interface {
	// object is the hub object, as last read; it carries flotilla.dev/approve and
	// flotilla.dev/undo.
	object() client.Object
	// what names the owner in messages ("Propagation team/settings").
	what() string
	// revisionsOwner owns the revisions (ControllerRevisions) and Delivery records.
	revisionsOwner() render.Owner
	// readStatus says where the rollout stands; latest is the owner's newest kept revision
	// ("" when it keeps none), the only revision an Event-sourced status is taken of.
	readStatus(ctx context.Context, hub client.Reader, latest string) (rolloutReport, error)
	// placement is the Placement whose spec.rollout rolls the owner out (found false: none,
	// as for an RGD no APIPropagation serves).
	placement(ctx context.Context, hub client.Reader) (key client.ObjectKey, found bool, err error)
	// pause sets what pausing its rollout means for this owner, and says what it changed.
	pause(ctx context.Context, hub client.Client, paused bool) (string, error)
}

// rolloutReport is where an owner's rollout stands, and where that was read.
type rolloutReport struct {
	rollout *flotillav1.RolloutStatus // nil: no rollout seen
	source  string                    // where it was read: status.rollout, an Event
	// advisory: read from Events, which anyone who may create Events in their namespace can
	// write; its revision is the owner's newest kept one, never an Event's.
	advisory bool
	// behind says why status.rollout may describe an earlier change of the owner
	// (status.observedGeneration < metadata.generation); "" when it does not.
	behind string
	// unconfirmed says why a terminal phase read from Events is not borne out by the rows
	// Flotilla writes (an RGD's APIPropagation's); "" when it is, or there are none.
	unconfirmed string
	// eventsVersion is the resourceVersion of the Event list the report was read from: a watch
	// from it misses no Event written since ("" when none was read).
	eventsVersion string
	extra         []string // more lines: a hub Deployment's fleet status fields
	// clusters are the per-cluster rows the owner's status keeps (Propagations and
	// ClusterPropagations: status.clusterResults; RGDs: their APIPropagation's rows).
	clusters []clusterRollout
}

// clusterRollout is one cluster's place in a rollout.
type clusterRollout struct {
	cluster string
	state   flotillav1.ClusterRolloutState
}

// resolveRolloutOwner reads from the hub the owner arg names ([KIND/]NAME, as flotilla plan
// reads it; a bare NAME is a Propagation).
func resolveRolloutOwner(ctx context.Context, hub client.Reader, arg, namespace string) (rolloutOwner, error) {
	o, err := parseOwnerArg(arg)
	if err != nil {
		return nil, err
	}
	switch o.kind {
	case kindPropagation, kindClusterPropagation:
		obj, err := getPropagator(ctx, hub, arg, scope{namespace: namespace})
		if err != nil {
			return nil, err
		}
		return &propagatorRollout{obj: obj}, nil
	case kindTransparent:
		u, err := getTransparent(ctx, hub, o, namespace)
		if err != nil {
			return nil, err
		}
		if !transparent.Delivers(u) {
			return nil, fmt.Errorf("%s %s/%s is not delivered by Flotilla (no %s label): label it with a Placement to roll it out",
				strings.ToLower(o.gvk.Kind), namespace, o.name, flotillav1.LabelPlacement)
		}
		return &transparentRollout{obj: u}, nil
	case kindRGD:
		rgd := &kro.ResourceGraphDefinition{}
		if err := hub.Get(ctx, client.ObjectKey{Name: o.name}, rgd); err != nil {
			return nil, notFoundHint(err, "resourcegraphdefinition", client.ObjectKey{Name: o.name})
		}
		return &rgdRollout{obj: rgd}, nil
	case kindAPIPropagation:
		return nil, usageError(fmt.Errorf("%q: an APIPropagation rolls out each RGD it serves on its own; name one: rgd/NAME (flotilla status %s lists them)", arg, arg))
	}
	return nil, usageError(fmt.Errorf("%q: a Placement has no rollout of its own; name an owner that uses it (NAME or propagation/NAME, clusterpropagation/NAME, deployment/NAME, rgd/NAME), or pause it with flotilla rollout pause %s", arg, arg))
}

// reload reads the owner's object again.
func reload(ctx context.Context, hub client.Reader, o rolloutOwner) error {
	obj := o.object()
	return hub.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

// propagatorRollout is a Propagation's or ClusterPropagation's rollout: status.rollout, its
// Placement's spec.rollout.paused.
type propagatorRollout struct{ obj client.Object }

func (p *propagatorRollout) object() client.Object { return p.obj }

func (p *propagatorRollout) kind() string {
	if _, ok := p.obj.(*flotillav1.ClusterPropagation); ok {
		return "ClusterPropagation"
	}
	return "Propagation"
}

func (p *propagatorRollout) what() string {
	if p.obj.GetNamespace() == "" {
		return p.kind() + " " + p.obj.GetName()
	}
	return p.kind() + " " + p.obj.GetNamespace() + "/" + p.obj.GetName()
}

func (p *propagatorRollout) revisionsOwner() render.Owner {
	return render.Owner{Kind: p.kind(), Namespace: p.obj.GetNamespace(), Name: p.obj.GetName()}
}

func (p *propagatorRollout) readStatus(context.Context, client.Reader, string) (rolloutReport, error) {
	var status *flotillav1.PropagationStatus
	switch o := p.obj.(type) {
	case *flotillav1.Propagation:
		status = &o.Status
	case *flotillav1.ClusterPropagation:
		status = &o.Status
	}
	rep := rolloutReport{rollout: status.Rollout, source: "status.rollout"}
	if status.ObservedGeneration < p.obj.GetGeneration() {
		rep.behind = fmt.Sprintf("status.observedGeneration %d is behind metadata.generation %d", status.ObservedGeneration, p.obj.GetGeneration())
	}
	for _, row := range status.ClusterResults {
		if row.Rollout != nil {
			rep.clusters = append(rep.clusters, clusterRollout{cluster: row.Cluster, state: *row.Rollout})
		}
	}
	return rep, nil
}

func (p *propagatorRollout) placement(context.Context, client.Reader) (client.ObjectKey, bool, error) {
	return propagation.PlacementOf(p.obj), true, nil
}

func (p *propagatorRollout) pause(ctx context.Context, hub client.Client, paused bool) (string, error) {
	return pausePlacement(ctx, hub, propagation.PlacementOf(p.obj), paused)
}

// transparentRollout is a transparent-mode object's rollout: its Events (and for a
// Deployment its fleet status fields); a Deployment pauses with its own spec.paused, as
// kubectl rollout pause does, any other kind with its Placement's.
type transparentRollout struct{ obj *unstructured.Unstructured }

func (t *transparentRollout) object() client.Object { return t.obj }

func (t *transparentRollout) what() string {
	return t.obj.GetKind() + " " + t.obj.GetNamespace() + "/" + t.obj.GetName()
}

func (t *transparentRollout) revisionsOwner() render.Owner { return transparent.OwnerOf(t.obj) }

func (t *transparentRollout) isDeployment() bool {
	gvk := t.obj.GroupVersionKind()
	return gvk.Group == "apps" && gvk.Kind == "Deployment"
}

func (t *transparentRollout) readStatus(ctx context.Context, hub client.Reader, latest string) (rolloutReport, error) {
	r, err := rolloutFromEvents(ctx, hub, t.obj, latest)
	if err != nil || !t.isDeployment() {
		return r, err
	}
	r.extra = append(r.extra, deploymentFleetStatus(t.obj))
	return r, nil
}

func (t *transparentRollout) placement(context.Context, client.Reader) (client.ObjectKey, bool, error) {
	key := transparent.PlacementOf(t.obj)
	return key, key.Name != "", nil
}

func (t *transparentRollout) pause(ctx context.Context, hub client.Client, paused bool) (string, error) {
	if !t.isDeployment() {
		return pausePlacement(ctx, hub, transparent.PlacementOf(t.obj), paused)
	}
	patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)
	if err := hub.Patch(ctx, t.obj, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		return "", fmt.Errorf("set spec.paused of %s: %w", t.what(), err)
	}
	return fmt.Sprintf("deployment.apps/%s spec.paused=%t: its fleet rollout %s (as kubectl rollout %s deployment/%s would)",
		t.obj.GetName(), paused, pausedWord(paused, "reaches no further cluster", "goes on"), pausedWord(paused, "pause", "resume"), t.obj.GetName()), nil
}

// deploymentFleetStatus is the line `kubectl rollout status` reads of a hub Deployment: its
// fleet-wide status fields, updatedReplicas counting only clusters the rollout reached.
func deploymentFleetStatus(u *unstructured.Unstructured) string {
	n := func(f string) int64 {
		v, _, _ := unstructured.NestedInt64(u.Object, "status", f)
		return v
	}
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	return fmt.Sprintf("fleet status of the hub Deployment: %d/%d replicas updated (on the clusters the rollout reached), %d ready, %d available, %d in all; observed generation %d of %d",
		n("updatedReplicas"), want, n("readyReplicas"), n("availableReplicas"), n("replicas"), n("observedGeneration"), u.GetGeneration())
}

// rgdRollout is an RGD's rollout under the APIPropagation that serves it: Events on the RGD,
// annotations on the RGD, the APIPropagation's Placement's spec.rollout.paused.
type rgdRollout struct{ obj *kro.ResourceGraphDefinition }

func (r *rgdRollout) object() client.Object { return r.obj }

func (r *rgdRollout) what() string { return "ResourceGraphDefinition " + r.obj.Name }

func (r *rgdRollout) revisionsOwner() render.Owner {
	return render.Owner{Kind: fleetapi.OwnerKind, Name: r.obj.Name}
}

func (r *rgdRollout) readStatus(ctx context.Context, hub client.Reader, latest string) (rolloutReport, error) {
	rep, err := rolloutFromEvents(ctx, hub, r.obj, latest)
	if err != nil {
		return rep, err
	}
	placer, err := fleetapi.ServedBy(ctx, hub, r.obj)
	if err != nil || placer == nil {
		return rep, err
	}
	for _, row := range placer.Status.ClusterResults {
		if row.API == r.obj.Name && row.Rollout != nil {
			rep.clusters = append(rep.clusters, clusterRollout{cluster: row.Cluster, state: *row.Rollout})
		}
	}
	if len(rep.clusters) > 0 {
		rep.extra = append(rep.extra, fmt.Sprintf("the per-cluster rows below are APIPropagation %s's status.clusterResults, which only Flotilla writes: they, not the Events, are authoritative", placer.Name))
		rep.unconfirmed = rowsConfirm(rep.rollout, rep.clusters, latest)
	}
	return rep, nil
}

// rowsConfirm says why rows Flotilla wrote do not bear out the terminal phase an Event
// reports ("" when they do, or the phase is not terminal): Complete needs every row Succeeded
// at latest, Halted a row Failed at it.
func rowsConfirm(r *flotillav1.RolloutStatus, rows []clusterRollout, latest string) string {
	if r == nil {
		return ""
	}
	switch r.Phase {
	case flotillav1.RolloutComplete:
		for _, c := range rows {
			if c.state.State != flotillav1.RolloutClusterSucceeded || c.state.Revision != latest {
				return fmt.Sprintf("the Events say Complete, but cluster %s is %s at revision %s", c.cluster, c.state.State, orNone(c.state.Revision))
			}
		}
	case flotillav1.RolloutHalted:
		for _, c := range rows {
			if c.state.State == flotillav1.RolloutClusterFailed && c.state.Revision == latest {
				return ""
			}
		}
		return fmt.Sprintf("the Events say Halted, but no cluster failed revision %s", latest)
	}
	return ""
}

func (r *rgdRollout) placement(ctx context.Context, hub client.Reader) (client.ObjectKey, bool, error) {
	placer, err := fleetapi.ServedBy(ctx, hub, r.obj)
	if err != nil || placer == nil {
		return client.ObjectKey{}, false, err
	}
	return fleetapi.PlacementOf(placer), true, nil
}

func (r *rgdRollout) pause(ctx context.Context, hub client.Client, paused bool) (string, error) {
	placer, err := fleetapi.ServedBy(ctx, hub, r.obj)
	if err != nil {
		return "", err
	}
	if placer == nil {
		return "", fmt.Errorf("no APIPropagation serves %s, so nothing rolls it out; choose it in an APIPropagation's spec.resourceGraphDefinitions", r.what())
	}
	return pausePlacement(ctx, hub, fleetapi.PlacementOf(placer), paused)
}

// pausePlacement sets a Placement's spec.rollout.paused: every owner using it pauses.
func pausePlacement(ctx context.Context, hub client.Client, key client.ObjectKey, paused bool) (string, error) {
	use := pausedWord(paused, "pause", "resume")
	pl := &flotillav1.Placement{}
	if err := hub.Get(ctx, key, pl); err != nil {
		return "", notFoundHint(err, "placement", key)
	}
	if pl.Spec.Rollout == nil {
		return "", fmt.Errorf("placement %s has no spec.rollout: its owners' revisions go everywhere at once, there is nothing to %s", key, use)
	}
	patch := fmt.Sprintf(`{"spec":{"rollout":{"paused":%t}}}`, paused)
	if err := hub.Patch(ctx, pl, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		return "", fmt.Errorf("%s %s: %w", use, key, err)
	}
	return fmt.Sprintf("placement.flotilla.dev/%s %sd (spec.rollout.paused=%t: the rollouts of every owner using it)", key.Name, use, paused), nil
}

func pausedWord(paused bool, yes, no string) string {
	if paused {
		return yes
	}
	return no
}
