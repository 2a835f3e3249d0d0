package ownerpass

import (
	"context"
	"errors"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// Plan computes what Run would give each chosen cluster, reading the hub through hub and
// book and changing nothing: the fleet-wide holds (holds.Planned), where a rollout under way
// stands as the records alone say it, the revisions pins hold clusters at (read whole,
// uncached, as the controller reads them), and where a division ends (a plan shows no move's
// holds on the way). It adds to d the holds, the kinds to look in and each cluster's objects.
func Plan(ctx context.Context, hub client.Reader, book *ledger.Ledger, p Pass, d *plan.Desired) error {
	owner := p.Owner.Owner
	records, err := book.Records(ctx, owner)
	if err != nil {
		return err
	}
	kinds := slices.Clone(p.Kinds)
	for _, rec := range records {
		kinds = append(kinds, rec.Spec.Kinds...)
	}
	delivered := p.Objects
	if p.Clusters != nil {
		delivered = nil // what the revision keeps, not what is delivered
	}
	d.Kinds = render.ParseKinds(render.Kinds(delivered, kinds...))
	decisions := Decisions(p.Placement)
	guard := p.Guard
	guard.Placement, guard.Chosen, guard.Delivered = p.Placement, decisions, ledger.Clusters(records)
	if h := holds.Planned(guard); h != nil {
		d.Holds = append(d.Holds, h.Message)
		if !h.Deliver {
			return nil
		}
	}
	in := p.input(decisions, fanout.Facts(ctx, hub, decisions))
	in.Pins = p.Pins
	running := fanout.RecordedRunning(records, decisions)
	if p.Clusters != nil {
		if running, _, err = p.Clusters.Running(ctx, decisions, records); err != nil {
			return err
		}
	}
	var hold string
	if in.Pins, hold = fanout.PlannedGate(in, rollout.Input{Policy: policyOf(p), Approved: p.Approved, Undo: p.Undo}, running); hold != "" {
		d.Holds = append(d.Holds, hold)
	}
	var out percluster.Outcome
	if p.Clusters != nil {
		out = p.Clusters.Compute(ctx, in)
	} else if out, err = planned(ctx, hub, book, p, in, records); err != nil {
		return err
	}
	for _, c := range out.Clusters(decisions) { // a cluster withheld is left: removed there
		w := out.Want[c]
		cd := plan.ClusterDesired{Cluster: c, Objects: w.Objects, Revision: w.Revision, Pinned: w.Pinned, Delivered: plan.DeliveredKeys(records[c])}
		if msg, failed := out.Failed[c]; failed {
			cd.Err = errors.New(msg)
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return nil
}

// planned is what package percluster gives each chosen cluster, for Plan: the revisions pins
// hold clusters at read whole, what each cluster runs and fits as the records say.
func planned(ctx context.Context, hub client.Reader, book *ledger.Ledger, p Pass, in percluster.Input, records map[string]*flotillav1.Delivery) (percluster.Outcome, error) {
	owner := p.Owner.Owner
	if len(in.Pins) > 0 {
		in.Pinned = (&revisions.Store{Reader: hub}).Pinned(ctx, owner, in.Pins, in.LatestName)
	}
	in.Have, in.Fits = percluster.HaveOf(p.Objects, records), percluster.FitsOf(p.Objects, records)
	if p.Gather != nil {
		if _, err := p.Gather(ctx, &in, records, false); err != nil {
			return percluster.Outcome{}, err
		}
	}
	return fanout.Planned(ctx, book, in)
}
