package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded/sharder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// slowAgents stands for Agents: what it runs for a cluster stops only when the test says so.
type slowAgents struct {
	mu      sync.Mutex
	engaged context.Context
	stopped chan struct{}
}

func (s *slowAgents) Engage(ctx context.Context, _ multicluster.ClusterName, _ cluster.Cluster) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engaged = ctx
	return nil
}

func (s *slowAgents) WaitStopped(ctx context.Context, _ string) {
	select {
	case <-s.stopped:
	case <-ctx.Done():
	}
}

// A replica starts a cluster it should hold once it has its fence, and when the cluster goes
// away it keeps the fence until what it ran there has stopped: the next holder's first write
// comes after this one's last.
func TestCoordinatorReleasesTheFenceOnlyOnceTheAgentStopped(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	c := New(kube, Options{ID: "hub-0", Namespace: "flotilla-system"}, logr.Discard())
	c.peers.since, c.peers.looked = time.Now().Add(-time.Minute), true
	c.peers.alive = []sharder.PeerInfo{{ID: "hub-0", Weight: 1}}
	agents := &slowAgents{stopped: make(chan struct{})}
	c.AddAware(agents)
	engagement, disengage := context.WithCancel(ctx)
	if err := c.Engage(engagement, "spoke-1", nil); err != nil {
		t.Fatal(err)
	}
	c.decide(ctx)
	if agents.engaged == nil {
		t.Fatal("the cluster was not started on the replica that should hold it")
	}
	holder := func() string {
		var l coordinationv1.Lease
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-spoke-1"}, &l); err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	if h := holder(); h != "hub-0" {
		t.Fatalf("fence holder %q, want hub-0", h)
	}

	disengage()
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			c.mu.Lock()
			_, engaged := c.clusters["spoke-1"]
			c.mu.Unlock()
			if !engaged {
				return
			}
			c.decide(ctx)
		}
	}()
	select {
	case <-agents.engaged.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the agent was not told to stop when the cluster went away")
	}
	if h := holder(); h != "hub-0" {
		t.Errorf("the fence went (holder %q) while the agent was still stopping", h)
	}
	close(agents.stopped)
	<-done
	if h := holder(); h != "" {
		t.Errorf("fence holder %q after the agent stopped, want it released", h)
	}
}
