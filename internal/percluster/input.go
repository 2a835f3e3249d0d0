package percluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Input is everything one pass of an owner decides each cluster's objects from.
type Input struct {
	Owner render.Owner
	// Placement is the owner's Placement (its replica policy, spread, tiers, move order and
	// decision states); Chosen are the clusters it chooses.
	Placement *flotillav1.Placement
	Chosen    []string
	// DivideByDefault divides a workload even when the Placement sets no replica policy
	// (transparent mode: one hub Deployment is one workload across the fleet).
	DivideByDefault bool
	// Latest is the owner's latest revision: its rendered objects, sorted (render.Sort), their
	// digest (render.Revision), and its name once it is kept ("" when it is not: too large);
	// LatestName is that name whether kept or not (a pin naming it is no pin).
	Latest     Revision
	LatestName string
	// Pins are the revision each pinned cluster runs (spec.revisionPins); Pinned are those
	// revisions as loaded, by name (revisions.Store.Pinned; a missing one fails its clusters).
	Pins   []flotillav1.RevisionPin
	Pinned map[string]Pinned
	// Scope are more objects the division's pass sees besides the owner's: the HPAs of the
	// same Placement that scale a transparent-mode workload (their bounds follow its shares).
	Scope []*unstructured.Unstructured
	// Given is the pass of an owner whose objects the Placement does not divide but that
	// follows a divided workload's shares (a transparent-mode HPA), zero otherwise.
	Given division.Pass
	// Rules are the override rules that apply (compiled), Facts what they and the division
	// see of each chosen cluster.
	Rules []override.Rule
	Facts map[string]override.Cluster
	// Have is what each cluster runs now of each divided workload, as the records say
	// Flotilla wrote it; Fits what each cluster is known to fit of each (by workload, cluster).
	Have division.Replicas
	Fits map[string]map[string]division.Fit
	// Free is what the limited clusters' placement limits admit besides what other owners
	// hold (the ledger's admission); nil: no cluster is limited.
	Free map[string]division.Usage
	// ReadyAt reports whether the owner's delivery to a cluster is complete and Ready at a
	// revision (the deliverer's latest result). nil skips every hold of a move: the outcome
	// is where the division ends (what `flotilla plan` shows).
	ReadyAt func(cluster, revision string) bool
}

// Revision is a revision of an owner's objects as a cluster's objects start from it.
type Revision struct {
	// Name is its ControllerRevision ("" when not kept), Digest its render.Revision.
	Name, Digest string
	Objects      []*unstructured.Unstructured
}

// Pinned is a pinned revision as loaded; Err says why it could not be (not kept, unreadable).
type Pinned struct {
	Revision
	Err error
}

// Divides reports whether the pass divides workloads: the Placement divides and the owner
// has a divisible workload.
func (in Input) Divides() bool {
	return in.Placement != nil && division.Divides(in.Placement.Spec.Replicas, in.DivideByDefault) &&
		len(division.Workloads(in.Latest.Objects)) > 0
}

// Want is what an owner should have on one chosen cluster.
type Want struct {
	Objects  []*unstructured.Unstructured
	Revision string
	// Replicas are the shares of divided workloads among Objects and what the cluster is
	// known to fit of each, recorded ahead with the kinds.
	Replicas []flotillav1.WorkloadReplicas
	// Base, when set, is the owner's revision Objects are made from: the cluster's record
	// says what it must run as that revision and the cluster's changes to it (spec.work).
	Base *Revision
	// Pinned is the pinned revision the objects are from ("" when the latest).
	Pinned string
}

// Outcome is what each chosen cluster gets.
type Outcome struct {
	// Want has the clusters that get objects; a chosen cluster in neither Want nor Failed is
	// withheld (an HPA where its workload has no share): it leaves, as if not chosen.
	Want map[string]Want
	// Failed are chosen clusters whose objects cannot be made, with why: they keep what they
	// have.
	Failed map[string]string
	// Shares are the division the pass moves to (nil when nothing is divided), before a move
	// holds any reduction; Reports say how each workload is divided, Unplaced why some of a
	// workload's replicas have no cluster (by workload).
	Shares   division.Replicas
	Reports  map[string]division.Report
	Unplaced map[string]string
	// Stalled says what a move waits for ("" when nothing is held).
	Stalled string
}

// Placed is what the outcome places on each cluster, for the ledger's admission.
func (o Outcome) Placed() map[string]division.Usage {
	placed := make(map[string]division.Usage, len(o.Want))
	for c, w := range o.Want {
		placed[c] = division.UsageOf(w.Objects)
	}
	return placed
}

// Clusters are the chosen clusters that get objects or keep theirs: every chosen one but the
// withheld.
func (o Outcome) Clusters(chosen []string) []string {
	out := make([]string, 0, len(chosen))
	for _, c := range chosen {
		_, wanted := o.Want[c]
		_, failed := o.Failed[c]
		if wanted || failed {
			out = append(out, c)
		}
	}
	return out
}
