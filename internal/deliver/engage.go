package deliver

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// engagement is one engaged instance of a spoke: multicluster-runtime hands it to the
// Deliverer (Engage) when the inventory engages the spoke, and ends its context when the spoke
// is disengaged (removed, its credentials rejected) or engaged again with a new instance (new
// credentials). Deliveries write through the engagement current when they start; watches
// registered on an instance's caches end with its engagement.
type engagement struct {
	name string
	cl   cluster.Cluster
	ctx  context.Context
}

// Engage implements multicluster.Aware: deliveries to the cluster use cl until ctx ends. It
// never blocks and never fails.
func (d *Deliverer) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	e := &engagement{name: string(name), cl: cl, ctx: ctx}
	d.mu.Lock()
	if old := d.engaged[e.name]; old != nil && old.cl == cl && old.ctx.Err() == nil {
		d.mu.Unlock()
		return nil
	}
	d.engaged[e.name] = e
	d.mu.Unlock()
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.engaged[e.name] == e {
			delete(d.engaged, e.name)
		}
	})
	return nil
}

// engagement returns the cluster's engaged instance, nil when it is not engaged.
func (d *Deliverer) engagement(name string) *engagement {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.engaged[name]; e != nil && e.ctx.Err() == nil {
		return e
	}
	return nil
}

// Start implements manager.Runnable: the Deliverer's workers run on the context it was made
// with; as a runnable it only receives engagements.
func (d *Deliverer) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection says engagements are received on every replica; only the elected one
// submits deliveries (its owners' controllers are elected).
func (d *Deliverer) NeedLeaderElection() bool { return false }
