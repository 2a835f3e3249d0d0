package shard

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded/sharder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
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

// clusterAgents stands for Agents over several clusters: a cluster's agent stops only when the
// test closes its channel (none: at once).
type clusterAgents struct {
	mu      sync.Mutex
	engaged map[string]context.Context
	starts  map[string]int
	stopped map[string]chan struct{}
}

func (a *clusterAgents) Engage(ctx context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.engaged[string(name)] = ctx
	if a.starts == nil {
		a.starts = map[string]int{}
	}
	a.starts[string(name)]++
	return nil
}

func (a *clusterAgents) WaitStopped(ctx context.Context, name string) {
	a.mu.Lock()
	stopped := a.stopped[name]
	a.mu.Unlock()
	if stopped == nil {
		return
	}
	select {
	case <-stopped:
	case <-ctx.Done():
	}
}

// One cluster slow to stop holds up nothing else: the loop goes on renewing the other clusters'
// fences (and the stopping one's, which stays held until its agent stopped). Before, the loop
// waited up to 30 s for the agent, and every other fence of the replica lapsed meanwhile.
func TestCoordinatorRenewsOtherFencesWhileAClusterStops(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	c := New(kube, Options{ID: "hub-0", Namespace: "flotilla-system", LeaseDuration: 3 * time.Second}, logr.Discard())
	c.peers.since, c.peers.looked = time.Now().Add(-time.Minute), true
	c.peers.alive = []sharder.PeerInfo{{ID: "hub-0", Weight: 1}}
	agents := &clusterAgents{engaged: map[string]context.Context{}, stopped: map[string]chan struct{}{"spoke-1": make(chan struct{})}}
	c.AddAware(agents)
	engagement, disengage := context.WithCancel(ctx)
	for name, ectx := range map[string]context.Context{"spoke-1": engagement, "spoke-2": ctx} {
		if err := c.Engage(ectx, multicluster.ClusterName(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	c.decide(ctx)
	renewed := func(name string) (string, time.Time) { return fenceRenewed(ctx, kube, name) }
	_, first1 := renewed("spoke-1")
	_, first2 := renewed("spoke-2")
	if first1.IsZero() || first2.IsZero() {
		t.Fatal("the replica did not take both clusters' fences")
	}

	disengage() // spoke-1 goes; its agent is slow to stop
	fleettest.Eventually(t, 10*time.Second, "both fences renewed while spoke-1 stops", func() error {
		start := time.Now()
		c.decide(ctx)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("one pass of the loop waited %s for a cluster to stop", took)
		}
		h1, at1 := renewed("spoke-1")
		h2, at2 := renewed("spoke-2")
		if h1 != "hub-0" || h2 != "hub-0" {
			t.Fatalf("a fence went (holders %q, %q) while spoke-1's agent was still stopping", h1, h2)
		}
		if !at1.After(first1) || !at2.After(first2) {
			return fmt.Errorf("renewed since: spoke-1 %s, spoke-2 %s", at1.Sub(first1), at2.Sub(first2))
		}
		return nil
	})
	if err := agents.engaged["spoke-1"].Err(); err == nil {
		t.Fatal("spoke-1's agent was not told to stop")
	}

	close(agents.stopped["spoke-1"])
	fleettest.Eventually(t, 10*time.Second, "spoke-1's fence released once its agent stopped", func() error {
		c.decide(ctx)
		c.mu.Lock()
		_, engaged := c.clusters["spoke-1"]
		c.mu.Unlock()
		if h, _ := renewed("spoke-1"); h != "" || engaged {
			return fmt.Errorf("holder %q, engaged %v", h, engaged)
		}
		return nil
	})
	if h, _ := renewed("spoke-2"); h != "hub-0" {
		t.Errorf("spoke-2's fence holder %q, want hub-0", h)
	}
}

// A cluster whose credentials change twice before the loop looks (engagement 1 delivering, 2
// and 3 new) has engagement 1's delivery stopped, and nothing started on 3 while it stops; a
// replica that stops meanwhile releases the fence only once it has stopped.
func TestCoordinatorStopsEveryReplacedEngagementFirst(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	c := New(kube, Options{ID: "hub-0", Namespace: "flotilla-system"}, logr.Discard())
	c.peers.since, c.peers.looked = time.Now().Add(-time.Minute), true
	c.peers.alive = []sharder.PeerInfo{{ID: "hub-0", Weight: 1}}
	agents := &clusterAgents{engaged: map[string]context.Context{}, stopped: map[string]chan struct{}{"spoke-1": make(chan struct{})}}
	c.AddAware(agents)
	first, end1 := context.WithCancel(ctx)
	if err := c.Engage(first, "spoke-1", nil); err != nil {
		t.Fatal(err)
	}
	c.decide(ctx)
	agents.mu.Lock()
	delivering := agents.engaged["spoke-1"]
	agents.mu.Unlock()
	if delivering == nil {
		t.Fatal("spoke-1 was not started")
	}
	second, end2 := context.WithCancel(ctx)
	if err := c.Engage(second, "spoke-1", nil); err != nil {
		t.Fatal(err)
	}
	end1()
	if err := c.Engage(ctx, "spoke-1", nil); err != nil {
		t.Fatal(err)
	}
	end2()
	for range 3 {
		c.decide(ctx)
	}
	if delivering.Err() == nil {
		t.Fatal("the first engagement's delivery was not stopped")
	}
	agents.mu.Lock()
	starts := agents.starts["spoke-1"]
	agents.mu.Unlock()
	if starts != 1 {
		t.Fatalf("%d deliveries started while the first was still stopping, want 1", starts)
	}
	holder := func() string {
		var l coordinationv1.Lease
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-spoke-1"}, &l); err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.stopAll()
	}()
	select {
	case <-stopped:
		t.Fatal("the replica stopped before the first engagement's delivery did")
	case <-time.After(200 * time.Millisecond):
	}
	if h := holder(); h != "hub-0" {
		t.Fatalf("the fence went (holder %q) while the first delivery was still stopping", h)
	}
	close(agents.stopped["spoke-1"])
	<-stopped
	if h := holder(); h != "" {
		t.Errorf("fence holder %q after the replica stopped, want it released", h)
	}
}

// A member replaced while the loop is in its pass (after the loop's snapshot of the members) is
// left to the newer member: it neither starts a delivery beside one still running nor gives
// the fence up. Engage runs here from inside the pass, as the loop reads another cluster's
// fence; the clusters' order in a pass is random, so the pass is tried many times.
func TestCoordinatorLeavesAMemberReplacedDuringItsPass(t *testing.T) {
	for i := range 50 {
		ctx := context.Background()
		var once sync.Once
		var engageDuringPass func()
		kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if key.Name == "flotilla-shard-a" && engageDuringPass != nil {
					once.Do(engageDuringPass)
				}
				return cl.Get(ctx, key, obj, opts...)
			}}).Build()
		c := New(kube, Options{ID: "hub-0", Namespace: "ns"}, logr.Discard())
		c.peers.since, c.peers.looked = time.Now().Add(-time.Minute), true
		c.peers.alive = []sharder.PeerInfo{{ID: "hub-0", Weight: 1}}
		agents := &clusterAgents{engaged: map[string]context.Context{}, stopped: map[string]chan struct{}{"b": make(chan struct{})}}
		c.AddAware(agents)
		if err := c.Engage(ctx, "b", nil); err != nil {
			t.Fatal(err)
		}
		c.decide(ctx)
		delivering := agents.engaged["b"]
		second, endSecond := context.WithCancel(ctx)
		_ = c.Engage(second, "b", nil)
		_ = c.Engage(ctx, "a", nil)
		engageDuringPass = func() { _ = c.Engage(ctx, "b", nil); endSecond() }
		c.decide(ctx)
		agents.mu.Lock()
		starts := agents.starts["b"]
		agents.mu.Unlock()
		c.mu.Lock()
		f := c.clusters["b"].fence
		c.mu.Unlock()
		if delivering.Err() == nil && (starts > 1 || !f.held(time.Now())) {
			t.Fatalf("pass %d: b's first delivery still runs and %d started, fence held %v", i, starts, f.held(time.Now()))
		}
		close(agents.stopped["b"])
	}
}

// A replica that stops gives each cluster's fence up as soon as that cluster's delivery has
// stopped, and renews the fences of those still stopping: another replica takes spoke-2 over
// at once, not after spoke-1's slow agent (up to stopWait), nor after spoke-1's fence expired.
func TestCoordinatorStoppingReleasesEachFenceAsItsClusterStops(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	c := New(kube, Options{ID: "hub-0", Namespace: "flotilla-system", LeaseDuration: 3 * time.Second, Probe: 200 * time.Millisecond}, logr.Discard())
	c.peers.since, c.peers.looked = time.Now().Add(-time.Minute), true
	c.peers.alive = []sharder.PeerInfo{{ID: "hub-0", Weight: 1}}
	agents := &clusterAgents{engaged: map[string]context.Context{}, stopped: map[string]chan struct{}{"spoke-1": make(chan struct{})}}
	c.AddAware(agents)
	for _, name := range []string{"spoke-1", "spoke-2"} {
		if err := c.Engage(ctx, multicluster.ClusterName(name), nil); err != nil {
			t.Fatal(err)
		}
	}
	c.decide(ctx)
	renewed := func(name string) (string, time.Time) { return fenceRenewed(ctx, kube, name) }
	_, first1 := renewed("spoke-1")
	if h, _ := renewed("spoke-2"); h != "hub-0" || first1.IsZero() {
		t.Fatal("the replica did not take both clusters' fences")
	}

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.stopAll()
	}()
	fleettest.Eventually(t, 10*time.Second, "spoke-2's fence released, spoke-1's renewed while its agent stops", func() error {
		h1, at1 := renewed("spoke-1")
		if h1 != "hub-0" {
			t.Fatalf("spoke-1's fence went (holder %q) while its agent was still stopping", h1)
		}
		if h2, _ := renewed("spoke-2"); h2 != "" {
			return fmt.Errorf("spoke-2's fence holder %q, want it released", h2)
		}
		if !at1.After(first1) {
			return fmt.Errorf("spoke-1's fence not renewed since the replica began to stop")
		}
		return nil
	})
	select {
	case <-stopped:
		t.Fatal("the replica stopped before spoke-1's agent did")
	default:
	}
	close(agents.stopped["spoke-1"])
	<-stopped
	if h, _ := renewed("spoke-1"); h != "" {
		t.Errorf("spoke-1's fence holder %q after the replica stopped, want it released", h)
	}
}

// fenceRenewed reads a cluster's fence Lease: its holder and last renewal ("" and zero when
// none holds it).
func fenceRenewed(ctx context.Context, kube client.Client, cluster string) (string, time.Time) {
	var l coordinationv1.Lease
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-" + cluster}, &l); err != nil ||
		l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil {
		return "", time.Time{}
	}
	return *l.Spec.HolderIdentity, l.Spec.RenewTime.Time
}
