package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// FieldManager is the server-side apply field manager of every write to a spoke.
const FieldManager = "flotilla"

// maxMessage bounds a result's message, so status stays small in a large fleet.
const maxMessage = 512

// deliver applies a job's objects in order and prunes what the owner no longer wants.
func (w *clusterWorker) deliver(ctx context.Context, job Job) Result {
	res := Result{Revision: job.Revision}
	e := w.d.engagement(w.name)
	if e == nil {
		res.Disconnected = true
		res.Message = "cluster is not connected (see its Ready condition); delivery resumes when it is"
		return res
	}
	// The delivery ends with the engagement: reads of a cache that stopped would only time
	// out, and what they confirmed would be of an instance no longer there.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.ctx, cancel)()
	cl := e.cl
	live := newLiveIndex(cl.GetAPIReader())
	prev := w.seen.Take(job.Owner)
	under := confirmedUnder(job.Strategy)
	ident := job.identities()
	ids := ident.ids
	for _, gvk := range ident.kinds {
		w.watch(e, gvk)
	}
	errs := make([]error, len(job.Objects))
	drifts := make([]*Drift, len(job.Objects))
	// An owner on a spoke records what it delivers on its own object before delivering it.
	metaKnown := job.OwnerMeta != nil && prev.StatusOf(ownerMetaKey(job.OwnerMeta)) == ownerMetaHash(job.OwnerMeta)
	metaErr := w.ownerMetaBefore(ctx, cl, job.Owner, job.OwnerMeta, metaKnown)
	// Phases run in order (CRDs, Namespaces, the rest); objects within a phase in parallel.
	for start := 0; start < len(job.Objects); {
		end := start
		for end < len(job.Objects) && ids[end].phase == ids[start].phase {
			end++
		}
		var todo []int
		for i := start; i < end; i++ {
			if prev.Unchanged(ids[i].key, ids[i].hash, under) {
				if d, ok := prev.Drifted[ids[i].key]; ok {
					drifts[i] = &d
				}
				continue // confirmed by an earlier delivery and not changed since
			}
			todo = append(todo, i)
		}
		one := func(i int) {
			if metaErr != nil {
				errs[i] = errAwaitingOwnerMeta
				return
			}
			drifts[i], errs[i] = w.applyOne(ctx, cl, live, job.Objects[i], job, prev.Known(ids[i].key))
		}
		// The first object of each namespace goes ahead: if the namespace is missing, it is
		// created once, instead of by every object of the namespace applied at the same time.
		leaders, rest := namespaceLeaders(job.Objects, todo)
		parallel(len(leaders), applyParallelism, func(i int) { one(leaders[i]) })
		parallel(len(rest), applyParallelism, func(i int) { one(rest[i]) })
		start = end
	}
	statuses, statusErrs := w.writeStatuses(ctx, cl, job, prev)
	var failures []string
	res.Permanent = true
	if metaErr != nil {
		res.Permanent = permanent(metaErr)
		res.Unanswered = unanswered(metaErr)
		failures = append(failures, metaErr.Error())
	}
	for _, err := range append(errs, statusErrs...) {
		if err != nil {
			res.Failed++
			res.Conflict = res.Conflict || errors.Is(err, decide.ErrConflict)
			if !errors.Is(err, errAwaitingOwnerMeta) {
				res.Permanent = res.Permanent && permanent(err)
				res.Unanswered = res.Unanswered || unanswered(err)
				failures = append(failures, err.Error())
			}
			continue
		}
		res.Applied++
	}
	pruned := false
	if len(failures) == 0 && job.Prune {
		if prev.LostNothing(ident.wants) {
			pruned = true
		} else {
			err := w.prune(ctx, cl, job, prev)
			var blocked pruneBlockedError
			var cascading cascadeBlockedError
			switch {
			case errors.As(err, &blocked) || errors.As(err, &cascading):
				res.PruneBlocked = err.Error()
				failures = append(failures, err.Error())
			case err != nil:
				// A prune the spoke could not answer (a restarting API server) is tried again
				// with backoff, not after permanentRetry.
				res.Permanent = res.Permanent && permanent(err)
				res.Unanswered = res.Unanswered || unanswered(err)
				failures = append(failures, err.Error())
			default:
				pruned = true
			}
		}
	}
	metaDone := false
	if len(failures) == 0 {
		if metaDone, metaErr = w.ownerMetaAfter(ctx, cl, job, pruned, metaKnown); metaErr != nil {
			res.Permanent = res.Permanent && permanent(metaErr)
			failures = append(failures, metaErr.Error())
		}
	}
	res.Complete = len(failures) == 0
	res.Permanent = res.Permanent && !res.Complete
	res.Message = joinBounded(failures)
	next := observe.NewConfirmed()
	next.Pruned = pruned && res.Complete
	if !pruned {
		next.Left = prev.StillOwned(ident.wants)
	}
	next.Under = under
	next.Status = statuses
	if job.OwnerMeta != nil && metaDone && metaErr == nil {
		next.Status[ownerMetaKey(job.OwnerMeta)] = ownerMetaHash(job.OwnerMeta)
	}
	for i := range job.Objects {
		if errs[i] != nil {
			continue
		}
		next.Hashes[ids[i].key] = ids[i].hash
		if d := drifts[i]; d != nil && !d.Corrected {
			next.Drifted[ids[i].key] = *d
		}
	}
	w.reportDrifts(ctx, cl, job, prev, drifts, &res)
	w.reportFights(job, ident.observed, &res)
	if res.Complete {
		res.Ready, res.NotReady = w.readiness(ctx, cl, job.Objects, ident.observed, prev, next)
	}
	if e.ctx.Err() == nil {
		w.seen.Confirm(job.Owner, next)
	}
	return res
}

// applyOne makes one object on the spoke as desired, writing only when it is not already. It
// returns the drift it found, if any: corrected (re-applied) or left, as decide.Decide says
// for the object's mode and drift policy. known says an earlier delivery confirmed the object
// on the cluster, so its absence now is a deletion made there.
func (w *clusterWorker) applyOne(ctx context.Context, cl cluster.Cluster, live *liveIndex, desired *unstructured.Unstructured, job Job, known bool) (*Drift, error) {
	// Before any request is built from its name.
	if err := checkName(desired); err != nil {
		return nil, err
	}
	ref := decide.Describe(desired)
	found := decide.Live{Known: known}
	if job.Owner.Namespace != "" {
		scope, err := decide.ScopeOf(cl.GetRESTMapper(), desired)
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("%s: the cluster does not serve this kind; deliver its CustomResourceDefinition first", ref)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		// Refused before anything is read: a tenant's object in another namespace is not
		// looked up there (Decide would refuse it all the same).
		if err := decide.CheckScope(job.Owner, job.Strategy, desired, scope); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		found.Scope = scope
	}
	key, hash := render.Key(desired), render.HashOf(desired)
	if w.seen.WroteRecently(key, hash) {
		return nil, nil // written moments ago; the cache has not caught up yet
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(desired.GroupVersionKind())
	cached, err := w.readGet(ctx, cl, client.ObjectKeyFromObject(desired), existing)
	if cached && (err == nil || apierrors.IsNotFound(err)) && w.seen.CacheBehind(key, cachedObject(existing, err)) {
		// This worker wrote the object since the cache last saw it (another owner wrote it
		// moments ago): the cache would tell an old story, so ask the API server.
		existing = &unstructured.Unstructured{}
		existing.SetGroupVersionKind(desired.GroupVersionKind())
		cached, err = false, cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(desired), existing)
	}
	var displaced string   // another Flotilla owner this delivery takes the object from
	var manager string     // who made the drift, when named while comparing
	var current = existing // the full live object, when there is one
	var ignore [][]string  // fields left to the cluster, as its copy stands
	switch {
	case err == nil:
		found.Object = existing
		ignore = decide.IgnoredFields(job.Ignore, desired, existing)
		if !decide.Holds(existing, job.Owner) {
			displaced = existing.GetAnnotations()[flotillav1.AnnotationOwner]
			break
		}
		found.Drift, manager = w.compare(ctx, cl, job, key, desired, existing, ignore)
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("%s: the cluster does not serve this kind; deliver its CustomResourceDefinition first", ref)
		}
		current = nil
		if cached {
			// Not among Flotilla's objects; it may still exist unmanaged, or relabelled.
			md, err := live.get(ctx, desired)
			if err != nil {
				return nil, fmt.Errorf("%s: read: %w", ref, err)
			}
			if md != nil {
				found.Object = md
			}
		}
	default:
		return nil, fmt.Errorf("%s: read: %w", ref, w.explainForbidden(err))
	}
	var correction *Drift // the drift this write corrects
	d := decide.Decide(job.Owner, job.Strategy, desired, found)
	switch d.Action {
	case decide.Conflict, decide.Refused:
		if errors.Is(d.Err, decide.ErrHeld) {
			w.waitFor(key, job.Owner)
		}
		return nil, fmt.Errorf("%s: %w", ref, d.Err)
	case decide.Unchanged, decide.Ignored:
		return nil, nil
	case decide.Skip, decide.Left:
		if len(d.Fields) == 0 && !d.Deleted {
			return nil, nil
		}
		return &Drift{Object: ref, Fields: d.Fields, Deleted: d.Deleted}, nil // left; reported
	case decide.Correct:
		correction = &Drift{Object: ref, Fields: d.Fields, Deleted: d.Deleted, Corrected: true, Manager: manager}
		if h := w.held(ctx, cl, job.Owner, key, hash, desired, correction); h != nil {
			return h, nil // corrected when its backoff ends (fight.go)
		}
	}
	// Create, Update or Correct: write it; an object taken over is marked adopted first.
	if d.Adopt && found.Object.GetAnnotations()[flotillav1.AnnotationAdopted] == "" {
		if err := w.markAdopted(ctx, cl, desired, found.Object, job.Owner); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, w.explainForbidden(err))
		}
	}
	toApply := keepIgnored(desired, current, ignore)
	w.seen.Writing(key)
	rv, err := w.apply(ctx, cl, job, toApply)
	if err != nil {
		w.seen.WriteFailed(key)
		return nil, fmt.Errorf("%s: %w", ref, w.explainForbidden(SecretError(desired, err)))
	}
	if correction != nil {
		w.corrected(job.Owner, key, hash, correction)
	}
	// Let an owner that lost the object find out at once: one this write displaced, or one
	// that wrote it moments ago on this worker without either delivery seeing the other's.
	var lost []pairKey
	if other, raced := w.seen.Wrote(key, hash, job.Owner, rv); raced {
		lost = append(lost, other)
	}
	if owner, ok := render.ParseOwner(displaced); ok {
		lost = append(lost, owner)
	}
	for _, owner := range lost {
		w.seen.Confirm(owner, nil)
		w.queue.Add(owner)
	}
	if render.IsCRD(desired) {
		return correction, waitEstablished(ctx, cl, desired.GetName())
	}
	return correction, nil
}

// compare returns where an object of the owner's on the cluster differs from what Flotilla's
// apply of desired stores there, and who made the difference when that was asked of the
// cluster. The cluster is asked (once per desired hash) only when the object carries the
// desired hash and its mode or drift policy makes a difference matter: the object may hold
// what the cluster stores for Flotilla's apply, with fields admission or the API server set
// otherwise, which is not drift.
func (w *clusterWorker) compare(ctx context.Context, cl cluster.Cluster, job Job, key string, desired, existing *unstructured.Unstructured, ignore [][]string) ([]string, string) {
	expected := w.seen.Expected(key, desired)
	paths := drift.Compare(expected, existing.Object, ignore)
	mode, policy := decide.ModeOf(desired, job.Strategy), decide.DriftOf(desired, job.Strategy)
	if paths == nil || render.HashOf(existing) != render.HashOf(desired) || (mode != flotillav1.ModeApplyOnce && policy == flotillav1.DriftIgnore) {
		return paths, ""
	}
	correct := mode != flotillav1.ModeApplyOnce && policy == flotillav1.DriftCorrect
	return w.recheck(ctx, cl, job.Owner, key, desired, existing, ignore, paths, correct)
}

// keepIgnored is what to apply over current: desired with the live values of its ignored
// fields, so an update neither changes nor drops them.
func keepIgnored(desired, current *unstructured.Unstructured, ignore [][]string) *unstructured.Unstructured {
	if current == nil || len(ignore) == 0 {
		return desired
	}
	return &unstructured.Unstructured{Object: drift.KeepLive(desired.Object, current.Object, ignore)}
}

// namespaceLeaders splits the indexes of objects into the first of each namespace and the rest.
func namespaceLeaders(objs []*unstructured.Unstructured, indexes []int) (leaders, rest []int) {
	seen := map[string]bool{}
	for _, i := range indexes {
		if ns := objs[i].GetNamespace(); ns != "" && !seen[ns] {
			seen[ns] = true
			leaders = append(leaders, i)
			continue
		}
		rest = append(rest, i)
	}
	return leaders, rest
}

// cachedObject is what the cache returned: nil when it has no such object.
func cachedObject(existing *unstructured.Unstructured, err error) *unstructured.Unstructured {
	if err != nil {
		return nil
	}
	return existing
}

// applyParallelism is how many objects of one phase one delivery applies at once.
const applyParallelism = 16

// parallel calls fn(0..n-1) with at most limit calls at a time and waits for all.
func parallel(n, limit int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}

// permanent reports whether the spoke will refuse the same object again: retrying it soon
// would only add load.
func permanent(err error) bool {
	return errors.Is(err, decide.ErrConflict) || errors.Is(err, decide.ErrOutOfScope) || errors.Is(err, errInvalidName) || errors.Is(err, errStatusTarget) || errors.Is(err, errOwnerMetaTarget) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsForbidden(err)
}

// apply writes desired, one of job's objects, to the spoke, as the identity of the namespace
// job's owner is confined to, if any (nsidentity.go).
func (w *clusterWorker) apply(ctx context.Context, cl cluster.Cluster, job Job, desired *unstructured.Unstructured) (rv string, err error) {
	applier, err := w.applierFor(ctx, cl, confinedTo(job.Owner, job.Strategy))
	if err != nil {
		return "", err
	}
	write := func(dryRun bool) error {
		return applier.settled(ctx, func() (err error) {
			rv, err = applier.apply(ctx, desired, dryRun)
			return err
		})
	}
	if rules := desired.GetAnnotations()[flotillav1.AnnotationOverrides]; rules != "" {
		// Overridden per cluster: the cluster validates the result before it is applied, and
		// a refusal names the rules, not just the object.
		err := write(true)
		countWrite(w.name, "dry-run", err)
		if err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("rejected by the cluster after override rules %s: %w", rules, err)
		}
	}
	err = write(false)
	countWrite(w.name, "apply", err)
	if err == nil || desired.GetNamespace() == "" || !apierrors.IsNotFound(err) || job.Owner.OnSpoke() {
		return rv, err
	}
	// The target namespace is missing: create it (unmarked, so it is never pruned with its
	// contents) and try once more. Not for an owner on a spoke (an instance of a fleet API):
	// as with kro, its child waits for the namespace, which is often another child's (a
	// Tenant's TenantEnvironment makes the namespace its TenantApplication's children go
	// to): one created here first would be nobody's, and refused to the child that makes it.
	if err := w.createNamespace(ctx, cl, desired.GetNamespace(), desired.GetAnnotations()[flotillav1.AnnotationOwner]); err != nil {
		return "", err
	}
	err = write(false)
	countWrite(w.name, "apply", err)
	return rv, err
}

// waitEstablished waits until a delivered CRD serves its kind, so objects of that kind can
// follow in the same delivery.
func waitEstablished(ctx context.Context, cl cluster.Cluster, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.GetAPIReader().Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, nil //nolint:nilerr // poll until the deadline
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s applied but not Established within 30s", name)
	}
	return nil
}

func joinBounded(msgs []string) string {
	r := []rune(strings.Join(msgs, "; "))
	if len(r) > maxMessage {
		return string(r[:maxMessage-1]) + "…"
	}
	return string(r)
}

// confirmedUnder names the rules a delivery's confirmations hold under: the strategy that
// decides its objects. Another strategy may decide otherwise (an instance confined to its
// namespace again is refused what it could write before), so confirmations made under one do
// not count under another. What confirms a prune decides no object, and its token changes with
// every revision: were it part of this, every edit would have every object decided again.
func confirmedUnder(s decide.Strategy) string {
	s.PruneConfirmed, s.ConfirmToken = "", ""
	return fmt.Sprintf("%+v", s)
}
