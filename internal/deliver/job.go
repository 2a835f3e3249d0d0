package deliver

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Job is what one owner wants on one cluster.
type Job struct {
	Owner   render.Owner
	Cluster string
	// Objects are rendered and sorted for applying.
	Objects []*unstructured.Unstructured
	// Revision identifies Objects as a whole (render.Revision).
	Revision string
	// PruneKinds are the kinds to look in for objects of Owner that Objects no longer has.
	PruneKinds []schema.GroupVersionKind
	// Prune allows deleting such objects; false holds them (for example while the selectors
	// match nothing, which is more often a typo than an intent).
	Prune bool
	// Strategy is what the apply decision (decide.Decide) and the prune rules read of the
	// owner's strategy: conflicts, mode and drift policy, deletion, the prune budget.
	decide.Strategy
	// Ignore are fields Flotilla sets on creation and then leaves to the cluster.
	Ignore drift.IgnoreSet
	// Status are the statuses objects on the cluster should show: each names an object
	// (apiVersion, kind, namespace, name) and carries the status to server-side apply to its
	// status subresource, as Flotilla's field manager. A target is the owner itself (an owner
	// on a spoke reports its state on its own object) or one of Objects, and must exist: a
	// status write never creates anything. A status the target already shows is not written.
	Status []*unstructured.Unstructured
	// OwnerMeta, for an owner on a spoke, is metadata its own object must carry: written
	// before any of Objects is applied (no object is applied until it is), or, with Release,
	// its finalizers removed once everything is applied and pruned (ownermeta.go).
	OwnerMeta *OwnerMeta
	// PruneOrder, when set, names an annotation holding each object's deletion wave (an
	// integer; missing or not positive counts as 0): a prune deletes the highest wave first and
	// waits until its objects are gone, not merely terminating, before it deletes the next.
	PruneOrder string
	// Identities, when set, are those of Objects (NewIdentities(Objects)), shared with the
	// jobs of other clusters that get the same objects; other identities are ignored, and a
	// job without them gets its own.
	Identities *Identities
}

// Result is the outcome of the latest delivery of a Job.
type Result struct {
	// Revision is the job's revision; Complete says it is fully delivered (and pruned, if asked).
	Revision string
	Complete bool
	// Applied counts objects in their desired state; Failed those that are not.
	Applied int
	Failed  int
	// Ready counts objects that are ready on the cluster, as kstatus computes it from the
	// spoke cache (a Deployment Available and rolled out, a CRD Established, a ConfigMap at
	// once); NotReady describes the first one that is not.
	Ready    int
	NotReady string
	// Conflict is set when an object belongs to someone else.
	Conflict bool
	// Permanent is set when every failure is one the spoke will repeat for the same object
	// (it is invalid, too large, or forbidden): the delivery is retried only rarely until the
	// object changes on the hub.
	Permanent bool
	// Disconnected is set when the cluster is not engaged (not joined, not yet probed, or its
	// credentials are rejected); the delivery is retried with backoff.
	Disconnected bool
	// Message describes the first failures.
	Message string
	// Unanswered says some failure was the spoke not answering (no connection, or one
	// dropped): the delivery is tried again as soon as the spoke answers ready (answer.go).
	Unanswered bool
	// PruneBlocked says why pruning waits for confirmation (counts included); the delivery is
	// then not Complete.
	PruneBlocked string
	// Drifted counts objects that differ from what was applied and are left so (drift
	// Report, mode ApplyOnce); DriftedObjects describes the first of them.
	Drifted        int
	DriftedObjects []Drift
	// Fighting counts objects that someone on the cluster changes back after every
	// correction (fight.go); FightingObjects describes the first of them. They are corrected
	// only with backoff until the fight ends or the hub object changes.
	Fighting        int
	FightingObjects []Drift
}

// ReadyAt reports whether the result is a complete delivery of revision with every object
// Ready: what a move waits for before it takes anything away elsewhere.
func (r Result) ReadyAt(revision string) bool {
	return r.Complete && r.Revision == revision && r.Ready >= r.Applied
}

// Drift is an object found changed on a cluster.
type Drift = observe.Drift

// maxDriftDetails bounds Result.DriftedObjects.
const maxDriftDetails = 5

// pairKey identifies a Job's owner on one cluster's queue.
type pairKey = render.Owner
