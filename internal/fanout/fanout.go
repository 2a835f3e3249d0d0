package fanout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/slo"
)

// removalRevision is the revision of a job that removes everything of an owner from a cluster.
const removalRevision = "removed"

// Fanout carries owners' objects to their clusters.
type Fanout struct {
	// Hub reads Clusters (is a cluster gone?).
	Hub       client.Reader
	Deliverer *deliver.Deliverer
	Ledger    *ledger.Ledger
	// Agents says which clusters an agent delivers to (pull.go).
	Agents ledger.Agents

	mu       sync.Mutex
	work     map[workKey]flotillav1.DeliveryWork // the work last recorded per owner and cluster (work.go)
	removing map[workKey]bool                    // removals submitted, until the cluster is forgotten
	changes  slo.Changes                         // times each owner's changes until applied everywhere
}

// Want is what an owner should have on one chosen cluster, Base the revision it is made
// from (package percluster computes both).
type (
	Want = percluster.Want
	Base = percluster.Revision
)

// Pass is one pass of an owner through the fanout: what its reconcile decided.
type Pass struct {
	Owner ledger.Owner
	// Records are the owner's Delivery records, by cluster (ledger.Records).
	Records map[string]*flotillav1.Delivery
	// Chosen are the clusters the owner's Placement chooses. Want has what each should have;
	// a chosen cluster missing from Want (its overrides failed, its pinned revision is gone)
	// keeps what it has, and holds up removals elsewhere.
	Chosen []string
	Want   map[string]Want
	// Kinds are where the owner's objects may be besides what a record lists (its
	// selection's kinds), looked in when a cluster is emptied.
	Kinds []string
	// Prune allows deleting objects the owner no longer wants on a chosen cluster.
	Prune    bool
	Strategy decide.Strategy
	Ignore   drift.IgnoreSet
	// Declared is the owner's strategy as its spec says it, recorded in spec.work with what
	// each cluster must run.
	Declared flotillav1.PropagationStrategy
	// WorkAhead writes each cluster's spec.work before its delivery, not aside after it (a
	// rollout: the gate reads what each cluster runs from the records).
	WorkAhead bool
	// Held, when set, keeps every cluster that left as it is, and says why (a fleet-wide hold
	// the caller reports: holds.Check).
	Held string
	// Confirm, when set, may refuse the removal from the clusters that left whose removal has
	// not started yet, returning why (it waits for a confirmation the caller reports); ""
	// lets it go ahead.
	Confirm func(leaving []string) string
	// ReleaseAtOnce empties the clusters that left without waiting for the chosen ones to be
	// Ready: make-before-break is for objects that move (a workload's copy serves until its new
	// one does), and a served API does not move (its instances stay with the cluster they are
	// on). The holds and the confirmation above still apply.
	ReleaseAtOnce bool
}

// Outcome is what a pass found.
type Outcome struct {
	// Results are the latest delivery results of the chosen clusters that have one.
	Results map[string]deliver.Result
	// Failed are chosen clusters where nothing was submitted this pass, with why.
	Failed map[string]string
	// Leaving are the clusters being emptied (or kept) after leaving, with their progress.
	Leaving map[string]deliver.Result
	// Stalled says why objects stay on clusters that left: they are not Ready yet where they
	// move to ("" when no removal waits for readiness).
	Stalled string
	// Refused is Confirm's refusal, if any.
	Refused string
	// Kept are the clusters in Leaving whose objects stay for Held or Refused, sorted: not
	// being emptied, nor waiting for a move.
	Kept []string
	// Err joins the record writes that failed (a record that could not be deleted after its
	// cluster was emptied): the caller returns it, so that the pass is retried with backoff.
	Err error
}

// Done reports whether every chosen cluster has what it should have, at its revision.
func (o Outcome) Done(pass Pass) bool {
	for _, c := range pass.Chosen {
		w, wanted := pass.Want[c]
		res, ok := o.Results[c]
		if !wanted || !ok || !res.Complete || res.Revision != w.Revision {
			return false
		}
	}
	return true
}

// Sync submits what each chosen cluster should have, records the latest results, and empties
// clusters that left once the chosen ones are Ready.
func (f *Fanout) Sync(ctx context.Context, pass Pass) Outcome {
	out := Outcome{Results: map[string]deliver.Result{}, Failed: map[string]string{}, Leaving: map[string]deliver.Result{}}
	owner := pass.Owner.Owner
	facts := objectFacts{}
	for _, c := range pass.Chosen {
		// A chosen cluster missing from Want keeps what it has; its latest result still counts.
		want, wanted := pass.Want[c]
		pull := f.Agents.Deliver(ctx, c) // its agent delivers and reports (pull.go)
		if wanted {
			// Written ahead: the record lists every kind before anything of it is delivered.
			of := facts.of(want.Objects)
			recorded, err := f.Ledger.Prepare(ctx, pass.Owner, c, of.kinds, want.Replicas, of.placed)
			if err != nil {
				out.Failed[c] = err.Error()
				continue
			}
			if pass.WorkAhead {
				// A rollout judges what a cluster runs by its record: it must say so before
				// the cluster has it, or a restart in between would take the cluster back.
				if err := f.recordWork(ctx, owner, c, want, pass.Declared, true); err != nil {
					out.Failed[c] = err.Error()
					continue
				}
			}
			if !pull {
				f.Deliverer.Submit(deliver.Job{Owner: owner, Cluster: c, Objects: want.Objects, Revision: want.Revision,
					PruneKinds: render.ParseKinds(recorded), Prune: pass.Prune, Strategy: pass.Strategy, Ignore: pass.Ignore,
					Identities: of.identities})
			}
			if !pass.WorkAhead {
				_ = f.recordWork(ctx, owner, c, want, pass.Declared, false)
			}
		}
		var res deliver.Result
		var ok bool
		if pull {
			res, ok = pulledResult(pass.Records[c], want, wanted)
		} else {
			res, ok = f.Deliverer.Result(owner, c)
		}
		if !ok {
			continue
		}
		out.Results[c] = res
		if !pull && wanted && res.Revision == want.Revision && !res.Disconnected {
			var prev flotillav1.DeliveryStatus
			if rec, found := pass.Records[c]; found {
				prev = rec.Status
			}
			f.Ledger.Report(owner, c, prev, res, want.Objects)
		}
	}
	f.leave(ctx, pass, &out)
	f.changes.Pass(owner, slo.Want(pass.Chosen, func(c string) string { return pass.Want[c].Revision }), out.Done(pass), time.Now())
	return out
}

// objectFacts are what a record says of a cluster's objects besides its work (their kinds,
// what they place there), computed once per pass for each set of objects: the clusters with
// no division and no overrides of their own all get the latest revision's objects, one slice,
// and walking a thousand objects once per cluster to learn the same cost a pass most of its
// CPU in a bulk owner's edit.
type objectFacts map[render.SliceID]objectFactsOf

type objectFactsOf struct {
	kinds  []string
	placed corev1.ResourceList
	// identities are what the deliveries of these objects learn of them, made by the first
	// delivery that needs them and shared by the others.
	identities *deliver.Identities
}

// of returns the kinds (render.Kinds), the usage (division.UsageOf) and the deliveries'
// identities of objs. The results are shared by the clusters with the same objects: read
// them, do not change them.
func (f objectFacts) of(objs []*unstructured.Unstructured) objectFactsOf {
	if len(objs) == 0 {
		return objectFactsOf{kinds: render.Kinds(objs), placed: division.UsageOf(objs).ResourceList()}
	}
	id := render.IDOf(objs)
	if got, ok := f[id]; ok {
		return got
	}
	got := objectFactsOf{kinds: render.Kinds(objs), placed: division.UsageOf(objs).ResourceList(), identities: deliver.NewIdentities(objs)}
	f[id] = got
	return got
}

// leave empties the clusters the records name that are no longer chosen, make before break.
func (f *Fanout) leave(ctx context.Context, pass Pass, out *Outcome) {
	chosen := map[string]bool{}
	for _, c := range pass.Chosen {
		chosen[c] = true
	}
	var leaving []string
	for _, c := range ledger.Clusters(pass.Records) {
		if chosen[c] {
			continue
		}
		gone, err := f.clusterGone(ctx, c)
		switch {
		case err != nil:
			// Not knowing is not "gone": keep the cluster and ask again later.
			out.Leaving[c] = deliver.Result{Message: "cannot read the Cluster (" + err.Error() + "); its objects are kept until it can be read"}
		case gone:
			// An unjoined cluster is only disconnected: its objects stay, unmanaged.
			out.Err = errors.Join(out.Err, f.forget(ctx, pass.Owner.Owner, c, out.Leaving))
		default:
			leaving = append(leaving, c)
		}
	}
	if len(leaving) == 0 {
		return
	}
	var notReady []string
	if !pass.ReleaseAtOnce {
		notReady = notReadyOn(pass, *out)
	}
	switch {
	case pass.Held != "":
		for _, c := range leaving {
			out.Leaving[c] = deliver.Result{Message: "kept: " + pass.Held}
		}
		out.Kept = slices.Sorted(slices.Values(leaving))
		return
	case pass.ReleaseAtOnce:
	case !out.Done(pass):
		for _, c := range leaving {
			out.Leaving[c] = deliver.Result{Message: "waiting for the chosen clusters before removing objects here"}
		}
		return
	case len(notReady) > 0:
		out.Stalled = fmt.Sprintf("the objects stay on %s until they are Ready on every chosen cluster; not Ready: %s",
			strings.Join(leaving, ", "), strings.Join(notReady, "; "))
		for _, c := range leaving {
			out.Leaving[c] = deliver.Result{Message: "kept until the objects are Ready where they move to (MoveInProgress)"}
		}
		return
	}
	if pass.Confirm != nil {
		// A removal under way (submitted by an earlier pass, confirmed then) is not asked
		// about again: the clusters left to empty shrink as it goes on.
		if fresh := f.unstarted(pass.Owner.Owner, leaving); len(fresh) > 0 {
			if out.Refused = pass.Confirm(fresh); out.Refused != "" {
				for _, c := range fresh {
					out.Leaving[c] = deliver.Result{Message: "kept: the removal waits for a confirmation (PruneBlocked)"}
				}
				out.Kept = slices.Sorted(slices.Values(fresh))
				leaving = slices.DeleteFunc(leaving, func(c string) bool { return slices.Contains(fresh, c) })
			}
		}
	}
	for _, c := range leaving {
		_, err := f.remove(ctx, pass.Owner.Owner, c, kindsOn(pass.Records, c, pass.Kinds), pass.Strategy, out.Leaving)
		out.Err = errors.Join(out.Err, err)
	}
}

// unstarted returns those of clusters where no removal of owner has been submitted: a removal
// confirmed once is not asked about again while it goes on. What was submitted is known since
// the controller started; after a restart, a removal that had not finished asks again.
func (f *Fanout) unstarted(owner render.Owner, clusters []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range clusters {
		if !f.removing[workKey{owner, c}] {
			out = append(out, c)
		}
	}
	return out
}

// notReadyOn describes the chosen clusters whose objects are applied but not all Ready.
func notReadyOn(pass Pass, out Outcome) []string {
	var notReady []string
	for _, c := range pass.Chosen {
		if res := out.Results[c]; res.Ready < res.Applied {
			notReady = append(notReady, c+": "+res.NotReady)
		}
	}
	sort.Strings(notReady)
	return notReady
}

// Cleanup removes (or, with Deletion Orphan, leaves) a deleted owner's objects on every
// cluster its records name; unjoined clusters are only forgotten. It returns the clusters
// still being emptied, with their progress (none left means the owner may go), and the record
// deletions that failed.
func (f *Fanout) Cleanup(ctx context.Context, owner render.Owner, records map[string]*flotillav1.Delivery, strategy decide.Strategy) (map[string]deliver.Result, error) {
	f.changes.Forget(owner)
	pending := map[string]deliver.Result{}
	var errs error
	for _, c := range ledger.Clusters(records) {
		progress := map[string]deliver.Result{}
		done := false
		var err error
		if gone, gerr := f.clusterGone(ctx, c); gerr == nil && gone {
			err = f.forget(ctx, owner, c, progress)
			done = err == nil
		} else {
			done, err = f.remove(ctx, owner, c, kindsOn(records, c, nil), strategy, progress)
		}
		if !done {
			pending[c] = progress[c]
		}
		errs = errors.Join(errs, err)
	}
	return pending, errs
}

// remove submits the removal of owner's objects from a cluster, looking in kinds. Once they
// are gone, it deletes the cluster's record and reports true; until then, progress gets the
// cluster's.
func (f *Fanout) remove(ctx context.Context, owner render.Owner, c string, kinds []schema.GroupVersionKind, strategy decide.Strategy, progress map[string]deliver.Result) (bool, error) {
	removal := decide.Strategy{Deletion: strategy.Deletion, PruneBudget: decide.Unbudgeted, PruneConfirmed: strategy.PruneConfirmed, ConfirmOn: strategy.ConfirmOn}
	f.mu.Lock()
	if f.removing == nil {
		f.removing = map[workKey]bool{}
	}
	f.removing[workKey{owner, c}] = true
	f.mu.Unlock()
	if f.Agents.Deliver(ctx, c) {
		// The hub cannot remove anything from a pull cluster: dropping the record takes the
		// owner out of the cluster's work, and its agent removes the objects after its grace.
		err := f.forget(ctx, owner, c, progress)
		return err == nil, err
	}
	f.Deliverer.Submit(deliver.Job{Owner: owner, Cluster: c, Revision: removalRevision, Prune: true, PruneKinds: kinds, Strategy: removal})
	res, ok := f.Deliverer.Result(owner, c)
	if !ok || !res.Complete || res.Revision != removalRevision {
		progress[c] = res
		return false, nil
	}
	err := f.forget(ctx, owner, c, progress)
	return err == nil, err
}

// forget deletes owner's record on a cluster and drops what the deliverer knows of it; a
// failure is in progress too.
func (f *Fanout) forget(ctx context.Context, owner render.Owner, c string, progress map[string]deliver.Result) error {
	if err := f.Ledger.Remove(ctx, owner, c); err != nil {
		progress[c] = deliver.Result{Message: err.Error()}
		return err
	}
	f.Deliverer.Forget(owner, c)
	f.forgetWork(owner, c)
	return nil
}

func (f *Fanout) clusterGone(ctx context.Context, name string) (bool, error) {
	err := f.Hub.Get(ctx, client.ObjectKey{Name: name}, &flotillav1.Cluster{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// kindsOn returns the kinds to look in for an owner's objects on a cluster: its record's and
// extra.
func kindsOn(records map[string]*flotillav1.Delivery, cluster string, extra []string) []schema.GroupVersionKind {
	kinds := extra
	if rec, ok := records[cluster]; ok {
		kinds = append(slices.Clone(extra), rec.Spec.Kinds...)
	}
	return render.ParseKinds(render.Kinds(nil, kinds...))
}
