package agent

import (
	"fmt"
	"time"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// removalRevision is the revision of a job that removes an owner from the spoke (as the hub's
// fanout names its removals).
const removalRevision = "removed"

// held is an owner the agent delivers, or removes.
type held struct {
	record string // its Delivery record on the hub, namespace/name
	// uid and generation are those of the record whose work job is: the agent never takes
	// an older generation of the same record (a hub replica whose cache lags).
	uid        string
	generation int64
	job        deliver.Job // its latest work submitted (no job yet: nothing of it was ever resolved)
	// kinds are every kind its jobs delivered since the agent started: where a removal, or a
	// prune of a kind it dropped, looks.
	kinds    []string
	deletion flotillav1.DeletionPolicy
	// missing is when a successful answer of the hub first left the owner out (zero while
	// the hub lists it); removing says its removal is submitted.
	missing  time.Time
	removing bool
}

// book is what the agent delivers, and decides, from the hub's successful answers alone, what
// to submit and what to remove. It is not safe for concurrent use (the agent's loop owns it).
type book struct {
	cluster string
	grace   time.Duration
	owners  map[render.Owner]*held
	// apiJob makes an RGD's item into its CRD's job (fleetapis.go); nil refuses such items.
	apiJob func(render.Owner, clusterwork.Item) (deliver.Job, error)
}

func newBook(cluster string, grace time.Duration) *book {
	return &book{cluster: cluster, grace: grace, owners: map[render.Owner]*held{}}
}

// answer takes a successful answer with the cluster's work (200) at now: the jobs to submit
// (every resolved item; the deliverer skips one it delivered already), the owners whose
// removal is due, and the items that could not be made into jobs, with why.
func (b *book) answer(work clusterwork.Work, now time.Time) (submit []deliver.Job, remove []deliver.Job, invalid map[string]string) {
	listed := map[render.Owner]bool{}
	for _, item := range work.Items {
		owner := ledger.OwnerOf(item.Owner)
		listed[owner] = true
		h := b.owners[owner]
		if h == nil {
			h = &held{record: item.Record}
			b.owners[owner] = h
		}
		h.record, h.missing, h.removing = item.Record, time.Time{}, false
		if item.Pending != "" {
			continue // the hub cannot say now: what runs stays
		}
		if item.RecordUID != "" && item.RecordUID == h.uid && item.Generation < h.generation {
			if invalid == nil {
				invalid = map[string]string{}
			}
			invalid[item.Record] = fmt.Sprintf("the hub answered with generation %d of the record, older than generation %d the spoke runs "+
				"(a hub replica that lags): keeping generation %d", item.Generation, h.generation, h.generation)
			continue
		}
		job, err := b.jobOf(owner, item)
		if err != nil {
			if invalid == nil {
				invalid = map[string]string{}
			}
			invalid[item.Record] = err.Error()
			continue
		}
		h.kinds = render.Kinds(job.Objects, h.kinds...)
		job.PruneKinds = render.ParseKinds(h.kinds)
		h.job, h.uid, h.generation = job, item.RecordUID, item.Generation
		if item.Strategy != nil {
			h.deletion = item.Strategy.Deletion
		}
		submit = append(submit, job)
	}
	for owner := range b.owners {
		if !listed[owner] && b.owners[owner].missing.IsZero() {
			b.owners[owner].missing = now
		}
	}
	return submit, b.due(now), invalid
}

// resumed restarts, at now, the grace of every owner a successful answer had left out: the hub
// answers again after failed requests (an outage, a refused token), and the time it did not
// answer does not count toward a removal.
func (b *book) resumed(now time.Time) {
	for _, h := range b.owners {
		if !h.missing.IsZero() && !h.removing {
			h.missing = now
		}
	}
}

// unchanged takes a successful answer that the work is as it was (304) at now: the owners
// whose removal is due.
func (b *book) unchanged(now time.Time) []deliver.Job { return b.due(now) }

// due returns the removals of the owners a successful answer has left out for the grace, and
// marks them removing.
func (b *book) due(now time.Time) []deliver.Job {
	var out []deliver.Job
	for owner, h := range b.owners {
		if h.missing.IsZero() || h.removing || now.Sub(h.missing) < b.grace {
			continue
		}
		h.removing = true
		if h.job.Revision == "" && len(h.kinds) == 0 {
			delete(b.owners, owner) // nothing of it was ever delivered here
			continue
		}
		out = append(out, deliver.Job{Owner: owner, Cluster: b.cluster, Revision: removalRevision, Prune: true,
			PruneKinds: render.ParseKinds(h.kinds),
			Strategy:   decide.Strategy{Deletion: h.deletion, PruneBudget: decide.Unbudgeted}})
	}
	return out
}

// removed forgets an owner whose removal completed.
func (b *book) removed(owner render.Owner) { delete(b.owners, owner) }

// jobOf makes an item of work into the deliverer's job, as the hub makes a Propagation's: its
// objects at the record's digest, its strategy as declared, pruning allowed (the hub records
// work only for an owner that selects something).
func (b *book) jobOf(owner render.Owner, item clusterwork.Item) (deliver.Job, error) {
	if item.Digest == "" {
		return deliver.Job{}, fmt.Errorf("no digest")
	}
	if owner.OnSpoke() {
		return deliver.Job{}, fmt.Errorf("owner %s lives on a spoke: the hub records no work for an instance of a fleet API", owner)
	}
	if isFleetAPI(owner) {
		if b.apiJob == nil {
			return deliver.Job{}, fmt.Errorf("owner %s is a fleet API: this agent serves none", owner)
		}
		return b.apiJob(owner, item)
	}
	s := flotillav1.PropagationStrategy{}
	if item.Strategy != nil {
		s = *item.Strategy
	}
	ignore, err := drift.NewIgnoreSet(s.IgnoreFields)
	if err != nil {
		return deliver.Job{}, fmt.Errorf("strategy: %w", err)
	}
	budget := holds.DefaultBudget
	if s.PruneBudgetPercent != nil {
		budget = int(*s.PruneBudgetPercent)
	}
	objs := item.Objects
	render.Sort(objs)
	return deliver.Job{Owner: owner, Cluster: b.cluster, Objects: objs, Revision: item.Digest, Prune: len(objs) > 0,
		Strategy: decide.Strategy{Deletion: s.Deletion, Conflict: s.Conflict, Mode: s.Mode, Drift: s.Drift,
			PruneBudget: budget, ConfirmToken: item.Revision, PruneConfirmed: item.PruneConfirmed},
		Ignore: ignore}, nil
}

// remembered is what the agent keeps on its spoke of an owner it delivered there (memory.go):
// enough for a restarted agent to remove the owner, or prune a kind it dropped, when the hub
// no longer lists it.
type remembered struct {
	Record   string                    `json:"record"`
	Kinds    []string                  `json:"kinds"`
	Deletion flotillav1.DeletionPolicy `json:"deletion,omitempty"`
	// UID and Generation are the record's whose work the spoke runs: a restarted agent does not
	// go back to an older generation either.
	UID        string `json:"uid,omitempty"`
	Generation int64  `json:"generation,omitempty"`
}

// recall takes what an earlier run of the agent delivered (read from the spoke at start):
// each owner is held with its kinds and deletion policy and no job. A successful answer that
// lists it delivers it as usual, pruning the remembered kinds too; one that leaves it out
// starts its removal grace, as for any owner.
func (b *book) recall(owners map[render.Owner]remembered) {
	for owner, r := range owners {
		if owner.OnSpoke() || len(r.Kinds) == 0 {
			continue
		}
		if h := b.owners[owner]; h != nil {
			h.kinds = render.Kinds(nil, append(h.kinds, r.Kinds...)...)
			continue
		}
		b.owners[owner] = &held{record: r.Record, kinds: render.Kinds(nil, r.Kinds...), deletion: r.Deletion,
			uid: r.UID, generation: r.Generation}
	}
}

// remember is what the spoke must keep of the book: every owner that delivered a kind there.
func (b *book) remember() map[render.Owner]remembered {
	out := map[render.Owner]remembered{}
	for owner, h := range b.owners {
		if len(h.kinds) > 0 {
			out[owner] = remembered{Record: h.record, Kinds: h.kinds, Deletion: h.deletion, UID: h.uid, Generation: h.generation}
		}
	}
	return out
}
