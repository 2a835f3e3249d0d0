package ownerpass

import (
	"context"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// Pass is what an owner kind says of one pass of its owner.
type Pass struct {
	// Owner is the owner as the records name it; Object is its hub object (what a rollback's
	// flotilla.dev/undo is set on).
	Owner  ledger.Owner
	Object client.Object
	// Placement is the owner's Placement; it exists (a missing one is the kind's hold).
	Placement *flotillav1.Placement
	// Objects are the owner's objects as rendered, sorted (render.Sort), Revision their digest
	// (render.Revision); Sources say where their Secrets' values are read again when a
	// revision is used (revisions.Source).
	Objects  []*unstructured.Unstructured
	Revision string
	Sources  map[string]revisions.Source
	// Pins are the revisions a person pinned clusters to; Approved and Undo the owner's
	// flotilla.dev/approve and flotilla.dev/undo values (a rollout's controls).
	Pins           []flotillav1.RevisionPin
	Approved, Undo string
	// Paused pauses the owner's rollout as the Placement's spec.rollout.paused would, for this
	// owner alone (`kubectl rollout pause` of a transparent-mode Deployment).
	Paused bool
	// Rules are the override rules that apply; DivideByDefault divides a workload even when
	// the Placement sets no replica policy (percluster.Input).
	Rules           []override.Rule
	DivideByDefault bool
	// Guard is what the fleet-wide holds see of the owner (its confirmation, budget, how it
	// names its Placement); Run adds the clusters chosen and delivered.
	Guard holds.Pass
	// Prune, Kinds, Strategy, Ignore and Declared are how the owner's deliveries go
	// (fanout.Pass).
	Prune    bool
	Kinds    []string
	Strategy decide.Strategy
	Ignore   drift.IgnoreSet
	Declared flotillav1.PropagationStrategy
	// Gather, when set, adds what only the owner's kind knows to the per-cluster input after
	// the records' defaults (what each cluster runs of the divided workloads): live is false
	// for a plan, which reads nothing but the hub. It returns when to look again (0: no need).
	Gather func(ctx context.Context, in *percluster.Input, records map[string]*flotillav1.Delivery, live bool) (time.Duration, error)
	// Clusters, when set, is the kind's own per-cluster step, for a kind whose objects are not
	// the same rendering for every cluster (fleet APIs: an RGD is compiled for each cluster
	// against that cluster's schemas): it reads what each chosen cluster runs, in place of the
	// records, and computes what each gets, in place of package percluster (Gather is not
	// called). Objects are then what the latest revision keeps (the RGD's spec), not what is
	// delivered.
	Clusters PerCluster
	// KeepFirst stores the latest revision before the pass delivers anything, not aside: an
	// RGD's CRD names the revision it was compiled from, which its cluster's instances are
	// expanded with again after a restart.
	KeepFirst bool
	// ReleaseAtOnce empties the clusters that left without waiting for the chosen ones to be
	// Ready (fanout.Pass.ReleaseAtOnce: a served API does not move).
	ReleaseAtOnce bool
}

// PerCluster is an owner kind's own per-cluster step (Pass.Clusters).
type PerCluster interface {
	// Running reads what each chosen cluster runs of the owner before anything is computed
	// (records are the owner's Delivery records, as the pass read them): the rollout gate goes
	// by it, and the history keeps what it names and keep besides (a cluster that cannot be
	// read may run any kept revision). err stops the pass.
	Running(ctx context.Context, chosen []string, records map[string]*flotillav1.Delivery) (running map[string]fanout.Running, keep []string, err error)
	// Compute computes what each chosen cluster gets: the revision in.Pins holds it at, or
	// the latest (in.LatestName). A cluster whose objects cannot be made is in Failed, with
	// why, and keeps what it has.
	Compute(ctx context.Context, in percluster.Input) percluster.Outcome
}

// Result is what a pass did and found, for the owner kind to report.
type Result struct {
	// Records are the owner's Delivery records at the pass's start, by cluster.
	Records map[string]*flotillav1.Delivery
	// LatestName is the name of the owner's latest revision, kept or not; Kept is that name
	// when it is kept, "" when it is not, and then NoHistory says why.
	LatestName, Kept, NoHistory string
	// Hold, when set, stopped the pass: nothing was delivered or removed. Held says why
	// removals wait while the chosen clusters are delivered to ("" when none waits).
	Hold *holds.Hold
	Held string
	// Rollout is where the rollout of the latest revision stands (nil: the Placement rolls
	// nothing out); RolloutChanged says its phase or revision changed since the last pass.
	Rollout        *flotillav1.RolloutStatus
	RolloutChanged bool
	// RolloutClusters is where each chosen cluster no person pins stands in the rollout (nil
	// when Rollout is); Stages are the stages that started or completed in this pass, in
	// order (ReportStages says them as Events).
	RolloutClusters map[string]flotillav1.ClusterRolloutState
	Stages          []rollout.StageChange
	// Pins are the pins the pass honoured: the owner's, then the rollout's.
	Pins []flotillav1.RevisionPin
	// Unmade says why no cluster's objects could be computed (an admission that failed): each
	// is in Computed.Failed with it, and keeps what it has.
	Unmade error
	// Computed is what each chosen cluster gets (package percluster); Chosen the clusters
	// delivered to (the Placement's, but those withheld).
	Computed percluster.Outcome
	Chosen   []string
	// Synced is the fan-out's outcome (zero when Hold stopped the pass).
	Synced fanout.Outcome
	// Recheck is when to look again though no watched event comes (0: no need).
	Recheck time.Duration
	// Err joins what failed but is retried (an admission, a record write, setting or taking
	// off a rollout's undo): the owner kind returns it from its reconcile.
	Err error
}

// Decisions are the clusters a Placement chooses, sorted.
func Decisions(p *flotillav1.Placement) []string {
	out := make([]string, 0, len(p.Status.Decisions))
	for _, d := range p.Status.Decisions {
		out = append(out, d.ClusterName)
	}
	slices.Sort(out)
	return out
}

// PlacementOf reads the Placement key names; nil when it does not exist (the owner kind's
// hold).
func PlacementOf(ctx context.Context, c client.Reader, key client.ObjectKey) (*flotillav1.Placement, error) {
	p := &flotillav1.Placement{}
	if err := c.Get(ctx, key, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return p, nil
}

// earliest is the sooner of two waits, 0 being none.
func earliest(a, b time.Duration) time.Duration {
	if b <= 0 {
		return a
	}
	if a <= 0 || b < a {
		return b
	}
	return a
}
