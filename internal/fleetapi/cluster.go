package fleetapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// spokeReadTimeout bounds a read of a spoke cache: a cache that cannot sync costs this read,
// and the cluster is looked at again later.
const spokeReadTimeout = 10 * time.Second

var crdKind = extv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// clusterPlan is what one pass decided for one cluster: the row to report unless the delivery
// says more, and what to deliver (nil: nothing new; the cluster keeps what it serves).
type clusterPlan struct {
	row  flotillav1.APIClusterResult
	want *fanout.Want
	// compiled is the graph delivered with want, of generation: what the cluster's instances
	// are expanded with once its CRD is served there.
	compiled   *kro.Compiled
	generation int64
	// held is the graph of the revision the cluster keeps serving when want is nil because
	// the revision it should get does not compile there or is refused (nil when it serves
	// none, or the revision cannot be compiled again): its instances are expanded with it.
	held *kro.Compiled
	// pinned is the revision the cluster is pinned to, when that is not the newest: by the
	// APIPropagation, or by the rollout (rolloutHeld, the same revision).
	pinned, rolloutHeld string
	// served is the revision the cluster's CRD names ("" when it names none): it stays in the
	// history while the cluster serves it.
	served string
	// unread says what the cluster serves could not be read (it is not connected, or its CRDs
	// could not be listed): it may serve any kept revision, so none is pruned meanwhile.
	unread bool
	// connecting says the cluster is Ready on the hub but not engaged yet (just after a start
	// or a join): its row is not worth publishing for a moment.
	connecting bool
	// pull says the cluster is a pull cluster: its agent compiles and serves want (pull.go).
	pull bool
}

// spokeView is what planning an RGD for one cluster reads of it: the controller reads through
// the cluster's engagement, `flotilla plan` (Preview) through a client of its own.
type spokeView struct {
	name string
	// delivered reads the CRDs Flotilla delivered there (the spoke cache holds only those: a
	// CRD of that name that is someone else's reads as none); live reads the cluster itself.
	delivered, live client.Reader
	// schemas returns a recent view of the cluster's schemas.
	schemas func() (*snapshot, error)
}

// clusterRead is what a pass reads of a cluster before it compiles anything there: what the
// cluster serves of the RGD, which the history keep (revisionsInUse) and the rollout gate
// (servedRunning) go by, and where to compile for it.
type clusterRead struct {
	// plan is the cluster's plan so far: its row, served, unread, connecting and pull.
	plan clusterPlan
	// final says that nothing more is planned there: the row says why (the cluster is not
	// connected, or its CRDs cannot be read); it keeps what it serves.
	final bool
	// view is an engaged cluster's, crd the CRD of the RGD's name Flotilla delivered there
	// (nil: none).
	view spokeView
	crd  *unstructured.Unstructured
}

// readCluster reads what a cluster serves of the RGD: a pull cluster by what its agent
// reported (readPull), one the controller is connected to by its CRD (readOn); one it is not
// connected to is Pending, and keeps what it serves.
func (r *Reconciler) readCluster(ctx context.Context, newest rgdRevision, owner render.Owner, name string, pull pullPass) clusterRead {
	if r.Agents.Deliver(ctx, name) {
		return r.readPull(ctx, newest, owner, name, pull)
	}
	engaged, err := r.Clusters.Get(ctx, multicluster.ClusterName(name))
	if err != nil {
		p := clusterPlan{row: flotillav1.APIClusterResult{Cluster: name, API: newest.rgd.Name}}
		p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APIPending, flotillav1.ReasonDisconnected, "the cluster is not connected to the hub"
		p.connecting, p.unread = r.clusterReady(ctx, name), true
		return clusterRead{plan: p, final: true}
	}
	view := spokeView{name: name, delivered: engaged.GetCache(), live: engaged.GetAPIReader(),
		schemas: func() (*snapshot, error) { return r.schemas.get(name, engaged) }}
	return readOn(ctx, view, newest, owner)
}

// readOn reads the CRD of the RGD's name Flotilla delivered to a cluster, and the revision and
// generation it serves.
func readOn(ctx context.Context, spoke spokeView, newest rgdRevision, owner render.Owner) clusterRead {
	p := clusterPlan{row: flotillav1.APIClusterResult{Cluster: spoke.name, API: newest.rgd.Name}}
	served, err := readCRD(ctx, spoke.delivered, kro.CRDName(newest.rgd))
	if err != nil {
		p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APIPending, flotillav1.ReasonDisconnected, limit("cannot read the cluster's CRDs: "+err.Error())
		p.unread = true
		return clusterRead{plan: p, final: true}
	}
	p.row.ServedGeneration, p.served = servedGeneration(served, owner), servedRevision(served, owner)
	return clusterRead{plan: p, view: spoke, crd: served}
}

// planRead plans a cluster read by readCluster for the revision it should serve: the newest,
// or pin (the APIPropagation's, or the rollout's).
func (r *Reconciler) planRead(ctx context.Context, read clusterRead, newest rgdRevision, owner render.Owner, pin string, pull pullPass) clusterPlan {
	switch {
	case read.final:
		return read.plan
	case read.plan.pull:
		return r.planPull(ctx, read.plan, newest, owner, pin, pull)
	}
	return r.planOn(ctx, read, newest, owner, pin)
}

// planOn compiles the revision a cluster should serve (the newest, or pin) against that
// cluster's schemas and decides whether its CRD may be delivered there: not when it does not
// compile there (a kind it uses is missing, say), not when the new CRD would break the one
// served and the RGD does not allow it, and not when the served CRD of that name is another
// RGD's. In each of those cases the cluster keeps serving what it serves, with its instances
// expanded by the revision served (held), and the row says why.
func (r *Reconciler) planOn(ctx context.Context, read clusterRead, newest rgdRevision, owner render.Owner, pin string) clusterPlan {
	p, spoke, served := read.plan, read.view, read.crd
	view, err := spoke.schemas()
	if err != nil {
		p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APICompileFailed, flotillav1.ReasonSchemaUnreadable, limit(err.Error())
		return p
	}
	target := newest
	if pin != "" && pin != newest.name {
		p.pinned = pin
		if target, err = r.loadRevision(ctx, owner, pin); err != nil {
			p.row.Phase, p.row.Reason = flotillav1.APIFailed, flotillav1.ReasonRevisionNotKept
			p.row.Message = limit(fmt.Sprintf("pinned to revision %s (spec.revisionPins, or the rollout): %v", pin, err))
			return r.hold(ctx, p, owner, view, "")
		}
	}
	rgd := target.rgd
	compiled, err := r.compile(rgd, view)
	if err != nil {
		p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APICompileFailed, compileReason(err), limit(fmt.Sprintf("generation %d: %v", rgd.Generation, err))
		return r.hold(ctx, p, owner, view, target.name)
	}
	desired, err := desiredCRD(compiled, target, owner)
	if err != nil {
		p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APIFailed, flotillav1.ReasonInvalidSpec, limit(err.Error())
		return r.hold(ctx, p, owner, view, target.name)
	}
	if served == nil {
		// Someone else's CRD may be there (a kro on the cluster made it, say): it is checked
		// as kro would check replacing it (refuseUpdate). Only a cluster about to get the CRD
		// is read, so a steady fleet, or one failing to compile, reads nothing.
		if served, err = readCRD(ctx, spoke.live, desired.GetName()); err != nil {
			p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APIPending, flotillav1.ReasonDisconnected, limit("cannot read the cluster's CRDs: "+err.Error())
			return r.hold(ctx, p, owner, view, target.name)
		}
	}
	if served != nil && render.HashOf(served) != render.HashOf(desired) {
		if reason, msg := r.refuseUpdate(rgd, served, compiled); reason != "" {
			p.row.Phase, p.row.Reason, p.row.Message = phaseOfRefusal(reason), reason, limit(fmt.Sprintf("generation %d: %s", rgd.Generation, msg))
			return r.hold(ctx, p, owner, view, target.name)
		}
	}
	p.row.Phase = flotillav1.APIDelivering
	objects := []*unstructured.Unstructured{desired}
	p.want = &fanout.Want{Objects: objects, Revision: render.Revision(objects)}
	p.compiled, p.generation = compiled, rgd.Generation
	return p
}

// compile compiles an RGD against a cluster view, once per (RGD, generation, what the RGD
// uses of the view's schemas).
func (r *Reconciler) compile(rgd *kro.ResourceGraphDefinition, view *snapshot) (*kro.Compiled, error) {
	key := compileKey{uid: rgd.UID, generation: rgd.Generation, fingerprint: view.fingerprint(kro.ReferencedKinds(rgd))}
	return r.compiles.get(key, func() (*kro.Compiled, error) {
		return kro.Compile(rgd, view.target(), kro.DefaultConfig())
	})
}

// hold finds the graph of the revision a cluster keeps serving, refused aside (the revision
// that just failed there): its instances are expanded with it. A CRD delivered without
// history, or a revision no longer kept, leaves the cluster without one; its row says why.
// Without a store (a pull cluster's agent, Spoke, which keeps the graph it served) it finds
// none.
func (r *Reconciler) hold(ctx context.Context, p clusterPlan, owner render.Owner, view *snapshot, refused string) clusterPlan {
	name := p.served
	if name == "" || name == refused || r.Revisions == nil {
		return p
	}
	rev, err := r.loadRevision(ctx, owner, name)
	if err == nil {
		p.held, err = r.compile(rev.rgd, view)
	}
	if err != nil {
		p.row.Message = limit(fmt.Sprintf("%s; the revision served here (%s) cannot be compiled again, so its instances wait: %v", p.row.Message, name, err))
	}
	return p
}

// clusterReady reports whether the hub's Cluster says the spoke answers.
func (r *Reconciler) clusterReady(ctx context.Context, name string) bool {
	cl := &flotillav1.Cluster{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
		return false
	}
	return meta.IsStatusConditionTrue(cl.Status.Conditions, flotillav1.ClusterReady)
}

// refuseUpdate applies kro's rules to replacing the served CRD: the reason and message of a
// refusal, or "".
func (r *Reconciler) refuseUpdate(rgd *kro.ResourceGraphDefinition, served *unstructured.Unstructured, compiled *kro.Compiled) (reason, message string) {
	var typed extv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(served.Object, &typed); err != nil {
		return flotillav1.ReasonApplyFailed, "cannot read the served CRD: " + err.Error()
	}
	_, err := kro.CheckCRDUpdate(rgd, &typed, compiled.CRD())
	var breaking *kro.BreakingChangeError
	var conflict *kro.CRDConflictError
	switch {
	case err == nil:
		return "", ""
	case errors.As(err, &breaking):
		return flotillav1.ReasonBreakingChange, err.Error()
	case errors.As(err, &conflict):
		return flotillav1.ReasonConflict, err.Error()
	}
	return flotillav1.ReasonApplyFailed, err.Error()
}

// refusalPhases are the phases of a cluster whose served CRD may not be replaced, by reason;
// any other refusal is APIFailed.
var refusalPhases = map[string]flotillav1.APIPhase{flotillav1.ReasonBreakingChange: flotillav1.APIBlocked, flotillav1.ReasonConflict: flotillav1.APIConflict}

func phaseOfRefusal(reason string) flotillav1.APIPhase {
	return cmp.Or(refusalPhases[reason], flotillav1.APIFailed)
}

// compileReason names a compile failure for status ("" for none).
func compileReason(err error) string {
	if err == nil {
		return ""
	}
	var missing *kro.SchemaNotFoundError
	var target *kro.TargetError
	var invalid *kro.InvalidGraphError
	switch {
	case errors.As(err, &missing):
		return flotillav1.ReasonSchemaNotFound
	case errors.As(err, &target):
		return flotillav1.ReasonSchemaUnreadable
	case errors.As(err, &invalid):
		return flotillav1.ReasonInvalidGraph
	}
	return flotillav1.ReasonCompileFailed
}

// desiredCRD is the CRD to serve: kro's generated CRD with kro's labels, the generation and the
// revision it was compiled from, and Flotilla's ownership markers.
func desiredCRD(compiled *kro.Compiled, rev rgdRevision, owner render.Owner) (*unstructured.Unstructured, error) {
	crd := compiled.CRD()
	if crd.Annotations == nil {
		crd.Annotations = map[string]string{}
	}
	crd.Annotations[flotillav1.AnnotationRGDGeneration] = strconv.FormatInt(rev.rgd.Generation, 10)
	if rev.name != "" {
		crd.Annotations[flotillav1.AnnotationAPIRevision] = rev.name
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(crdKind)
	return render.Render(u, owner)
}

// readCRD reads the CRD of that name, nil when there is none.
func readCRD(ctx context.Context, reader client.Reader, name string) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, spokeReadTimeout)
	defer cancel()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crdKind)
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

// servedGeneration is the RGD generation a CRD this owner delivered was compiled from, once it
// is Established; 0 otherwise.
func servedGeneration(crd *unstructured.Unstructured, owner render.Owner) int64 {
	if crd == nil || !decide.Owned(crd, owner) || !established(crd) {
		return 0
	}
	g, err := strconv.ParseInt(crd.GetAnnotations()[flotillav1.AnnotationRGDGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return g
}

func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == string(extv1.Established) && m["status"] == string(extv1.ConditionTrue) {
			return true
		}
	}
	return false
}

// settle reads the delivery's latest result into a row that was submitted.
func settle(row flotillav1.APIClusterResult, want *fanout.Want, res deliver.Result, ok bool, generation int64) flotillav1.APIClusterResult {
	switch {
	case ok && res.Disconnected:
		row.Phase, row.Reason, row.Message = flotillav1.APIPending, flotillav1.ReasonDisconnected, "the cluster is not connected to the hub"
	case !ok || res.Revision != want.Revision:
		row.Phase, row.Message = flotillav1.APIDelivering, fmt.Sprintf("delivering the CRD of generation %d", generation)
	case res.Conflict:
		row.Phase, row.Reason, row.Message = flotillav1.APIConflict, flotillav1.ReasonConflict, limit(res.Message)
	case !res.Complete && (res.Failed > 0 || res.Message != ""):
		row.Phase, row.Reason, row.Message = flotillav1.APIFailed, flotillav1.ReasonApplyFailed, limit(res.Message)
	case !res.Complete || res.Ready < res.Applied:
		row.Phase, row.Message = flotillav1.APIDelivering, limit("waiting for the CRD to be Established: "+res.NotReady)
	default:
		row.Phase, row.Reason, row.Message, row.ServedGeneration = flotillav1.APIServing, "", "", generation
	}
	return row
}

// limit keeps a message within the API's 512 characters, cut at a character boundary.
func limit(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	cut := max - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
