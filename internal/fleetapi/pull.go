package fleetapi

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// AnnotationTenancy is set by the hub on the RGD of a pull cluster's work: the APIPropagation's
// tenancy (Namespace or Cluster) the instances are expanded with. The hub always writes it,
// over whatever the RGD itself carries, so only the hub decides it.
const AnnotationTenancy = "flotilla.dev/api-tenancy"

// pullPass is what planning a pull cluster needs of the pass: the records (what each agent
// reported) and the tenancy the APIPropagation serves the API with.
type pullPass struct {
	records map[string]*flotillav1.Delivery
	tenancy flotillav1.Tenancy
}

// readPull reads what a pull cluster serves: what its agent last reported complete.
func (r *Reconciler) readPull(ctx context.Context, newest rgdRevision, owner render.Owner, name string, pass pullPass) clusterRead {
	p := clusterPlan{row: flotillav1.APIClusterResult{Cluster: name, API: newest.rgd.Name}, pull: true}
	p.served, p.unread = r.servedByAgent(ctx, pass.records[name], owner, newest)
	if p.served != "" {
		p.row.ServedGeneration = r.generationOf(ctx, owner, p.served, newest)
	}
	return clusterRead{plan: p}
}

// planPull plans a pull cluster read by readPull: the revision it should serve (the newest, or
// pin) as its work, with the tenancy change.
func (r *Reconciler) planPull(ctx context.Context, p clusterPlan, newest rgdRevision, owner render.Owner, pin string, pass pullPass) clusterPlan {
	target := newest
	if pin != "" && pin != newest.name {
		p.pinned = pin
		var err error
		if target, err = r.loadRevision(ctx, owner, pin); err != nil {
			p.row.Phase, p.row.Reason = flotillav1.APIFailed, flotillav1.ReasonRevisionNotKept
			p.row.Message = limit(fmt.Sprintf("pinned to revision %s (spec.revisionPins, or the rollout): %v", pin, err))
			return p
		}
	}
	if target.name == "" {
		p.row.Phase, p.row.Reason = flotillav1.APIFailed, flotillav1.ReasonRevisionNotKept
		p.row.Message = "this hub keeps no revisions of the RGD, and a pull cluster's agent reads the revision it serves from them"
		return p
	}
	base, err := r.pullBase(ctx, owner, target, newest)
	if err != nil {
		p.row.Phase, p.row.Reason, p.row.Message = flotillav1.APIFailed, flotillav1.ReasonRevisionNotKept, limit(err.Error())
		return p
	}
	objs := pullObjects(base, revisionHash(target.name), pass.tenancy)
	p.row.Phase = flotillav1.APIDelivering
	p.want = &fanout.Want{Objects: objs, Revision: render.Revision(objs),
		Base: &fanout.Base{Name: target.name, Digest: render.Revision(base), Objects: base}}
	p.generation = target.rgd.Generation
	return p
}

// pullBase is the kept revision's objects as the work endpoint will read them: loaded from the
// store, or, for the newest revision not saved yet (this pass saves it before the record names
// it), the object about to be saved.
func (r *Reconciler) pullBase(ctx context.Context, owner render.Owner, target, newest rgdRevision) ([]*unstructured.Unstructured, error) {
	objs, _, err := r.Revisions.Load(ctx, owner, target.name)
	if err == nil {
		return objs, nil
	}
	if target.name != newest.name {
		return nil, err
	}
	obj, _, rerr := revisionObject(newest.rgd)
	if rerr != nil {
		return nil, rerr
	}
	return []*unstructured.Unstructured{obj}, nil
}

// pullObjects is the revision's RGD as a pull cluster gets it: with the hub's tenancy, and a
// hash (flotilla.dev/hash) naming the revision and the tenancy, which the work's digest
// (render.Revision) is made of (pullDigest).
func pullObjects(base []*unstructured.Unstructured, hash string, tenancy flotillav1.Tenancy) []*unstructured.Unstructured {
	out, t := make([]*unstructured.Unstructured, 0, len(base)), cmp.Or(tenancy, flotillav1.TenancyNamespace)
	for _, o := range base {
		c := o.DeepCopy()
		a := c.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[AnnotationTenancy] = string(t)
		a[flotillav1.AnnotationHash] = hash + "." + strings.ToLower(string(t))
		c.SetAnnotations(a)
		out = append(out, c)
	}
	return out
}

// pullDigest is the digest of a pull cluster's work for the RGD rgd at the revision of that hash
// with tenancy (what pullObjects makes, as render.Revision digests it), without the RGD:
// the digest an agent reports names the revision it serves (servedByAgent).
func pullDigest(rgd, hash string, tenancy flotillav1.Tenancy) string {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(kro.GroupVersion.WithKind(rgdKind))
	o.SetName(rgd)
	return render.Revision(pullObjects([]*unstructured.Unstructured{o}, hash, tenancy))
}

// revisionHash is the hash a revision's name ends with (revisions.Name).
func revisionHash(name string) string {
	return name[strings.LastIndex(name, ".")+1:]
}

// servedByAgent is the revision a pull cluster's agent last reported serving whole: the one
// whose digest is the record's status.revision (its work's, the newest's or a kept one's);
// unread when none is (the cluster was a push cluster, or the history cannot be listed), so
// that any kept revision may be in use.
func (r *Reconciler) servedByAgent(ctx context.Context, rec *flotillav1.Delivery, owner render.Owner, newest rgdRevision) (served string, unread bool) {
	if rec == nil || rec.Status.Revision == "" {
		return "", false
	}
	digest := rec.Status.Revision
	if w := rec.Spec.Work; w != nil && w.Digest == digest {
		return w.Revision, false
	}
	names := []string{newest.name}
	if r.Revisions == nil {
		return "", true
	}
	if kept, err := r.Revisions.List(ctx, owner); err == nil {
		for _, k := range kept {
			names = append(names, k.Name)
		}
	}
	for _, name := range names {
		for _, t := range []flotillav1.Tenancy{flotillav1.TenancyNamespace, flotillav1.TenancyCluster} {
			if name != "" && pullDigest(owner.Name, revisionHash(name), t) == digest {
				return name, false
			}
		}
	}
	return "", true
}

// generationOf is the RGD generation of a revision, 0 when it cannot be read.
func (r *Reconciler) generationOf(ctx context.Context, owner render.Owner, name string, newest rgdRevision) int64 {
	if name == newest.name {
		return newest.rgd.Generation
	}
	rev, err := r.loadRevision(ctx, owner, name)
	if err != nil {
		return 0
	}
	return rev.rgd.Generation
}

// pullRow is a pull cluster's row once settled: a result its agent reported as not served, with
// a reason, shows that reason as a push cluster's row would.
func pullRow(row flotillav1.APIClusterResult, rec *flotillav1.Delivery) flotillav1.APIClusterResult {
	if rec == nil || rec.Status.Reason == "" || row.Phase != flotillav1.APIFailed {
		return row
	}
	switch reason := rec.Status.Reason; reason {
	case flotillav1.ReasonCompileFailed, flotillav1.ReasonSchemaNotFound, flotillav1.ReasonSchemaUnreadable, flotillav1.ReasonInvalidGraph:
		row.Phase, row.Reason = flotillav1.APICompileFailed, reason
	case flotillav1.ReasonBreakingChange, flotillav1.ReasonConflict:
		row.Phase, row.Reason = phaseOfRefusal(reason), reason
	case flotillav1.ReasonInvalidSpec, flotillav1.ReasonApplyFailed:
		row.Reason = reason
	}
	return row
}
