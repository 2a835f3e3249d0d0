package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

const (
	// moveReplicas is the fleet-wide size of the moved Deployment.
	moveReplicas = 20
	// readyDelay is how long a copy's new replicas take to become available: the spokes run
	// no controllers, so the benchmark plays the Deployment controller, slowly enough that a
	// move that breaks before it makes shows.
	readyDelay = 2 * time.Second
	// rewatchEvery is how often the fake controller tries again to watch a spoke that stopped.
	rewatchEvery = 500 * time.Millisecond
)

// move: a transparent-mode Deployment of moveReplicas replicas on half the spokes moves to the
// other half (their labels are swapped). move_min_available is the lowest number of available
// replicas in the fleet during the move, as a share of moveReplicas (target 1.0).
func (b *bench) move(ctx context.Context, r *report) error {
	if b.p.Spokes < 2 {
		r.add("move_min_available", "share", nil, nil, "needs at least 2 spokes")
		return nil
	}
	names := make([]string, 0, b.p.Spokes)
	for _, s := range b.pushSpokes() {
		names = append(names, s.Name())
	}
	half := len(names) / 2
	for i, name := range names {
		if err := b.labelCluster(ctx, name, map[bool]string{true: "a", false: "b"}[i < half]); err != nil {
			return err
		}
	}
	if err := b.hub.Create(ctx, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: ns},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench-move": "a"}}}}); err != nil {
		return err
	}
	ctl := newFakeDeployments(b.spokes, "mover")
	defer ctl.stop()
	if err := ctl.start(ctx); err != nil {
		return err
	}
	sel := map[string]string{"app": "mover"}
	if err := b.hub.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "mover", Namespace: ns, Labels: map[string]string{flotillav1.LabelPlacement: "move"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](moveReplicas), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/bench/app:v0"}}}}},
	}); err != nil {
		return err
	}
	if err := ctl.waitFor(func(copies map[int]int32) bool { return len(copies) == half && sum(copies) == moveReplicas }); err != nil {
		return fmt.Errorf("mover on the first half: %w", err)
	}
	ctl.resetLowest()
	start := time.Now()
	for i, name := range names {
		if err := b.labelCluster(ctx, name, map[bool]string{true: "b", false: "a"}[i < half]); err != nil {
			return err
		}
	}
	if err := ctl.waitFor(func(copies map[int]int32) bool {
		for i := range copies {
			if i < half {
				return false
			}
		}
		return len(copies) == len(names)-half && sum(copies) == moveReplicas
	}); err != nil {
		return fmt.Errorf("mover on the second half: %w", err)
	}
	low := ctl.lowestAvailable()
	r.add("move_min_available", "share", f(float64(low)/moveReplicas), nil,
		fmt.Sprintf("fewest available replicas in the fleet while %d replicas moved from %d spokes to %d (%.1f s; readiness takes %s); target 1.0",
			moveReplicas, half, len(names)-half, time.Since(start).Seconds(), readyDelay))
	return nil
}

func sum(m map[int]int32) int32 {
	var s int32
	for _, v := range m {
		s += v
	}
	return s
}

// labelCluster sets a Cluster's bench-move label.
func (b *bench) labelCluster(ctx context.Context, name, group string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &flotillav1.Cluster{}
		if err := b.hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels["bench-move"] = group
		return b.hub.Update(ctx, c)
	})
}

// fakeDeployments plays the Deployment controller for one Deployment on API-only spokes: a
// copy's replicas become available readyDelay after they are asked for (at once when fewer
// are asked for), and it records the fewest available replicas over the fleet.
type fakeDeployments struct {
	spokes []kubernetes.Interface
	name   string

	mu        sync.Mutex
	available map[int]int32 // per spoke, what the status says
	wanted    map[int]int32 // per spoke, spec.replicas
	lowest    int32
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

func newFakeDeployments(spokes []kubernetes.Interface, name string) *fakeDeployments {
	return &fakeDeployments{spokes: spokes, name: name, available: map[int]int32{}, wanted: map[int]int32{}, lowest: 1 << 30}
}

func (c *fakeDeployments) start(ctx context.Context) error {
	ctx, c.cancel = context.WithCancel(ctx)
	for i, cs := range c.spokes {
		w, err := c.watch(ctx, cs)
		if err != nil {
			c.cancel()
			return err
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.follow(ctx, i, cs, w)
		}()
	}
	return nil
}

func (c *fakeDeployments) watch(ctx context.Context, cs kubernetes.Interface) (watch.Interface, error) {
	return cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + c.name})
}

// follow observes one spoke's copy until ctx ends. A watch that ends (the spoke was stopped)
// is opened again until the spoke answers: a new watch starts with the copy as it is, so a
// spoke that comes back is played again, as its own controller would.
func (c *fakeDeployments) follow(ctx context.Context, i int, cs kubernetes.Interface, w watch.Interface) {
	for {
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				c.observe(ctx, i, cs, d, ev.Type == watch.Deleted)
			}
		}
		w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rewatchEvery):
			}
			var err error
			if w, err = c.watch(ctx, cs); err == nil {
				break
			}
		}
	}
}

// observe records a copy's state and brings its status to its spec: at once for fewer
// replicas, after readyDelay for more.
func (c *fakeDeployments) observe(ctx context.Context, i int, cs kubernetes.Interface, d *appsv1.Deployment, deleted bool) {
	c.mu.Lock()
	if deleted {
		delete(c.available, i)
		delete(c.wanted, i)
	} else {
		c.available[i], c.wanted[i] = d.Status.AvailableReplicas, *d.Spec.Replicas
	}
	c.noteLocked()
	c.mu.Unlock()
	if deleted || (d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == *d.Spec.Replicas) {
		return
	}
	delay := readyDelay
	if *d.Spec.Replicas < d.Status.AvailableReplicas {
		delay = 0
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.AppsV1().Deployments(ns).Get(ctx, c.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && cur.Generation != d.Generation) {
				return nil // gone, or changed again: that change is handled on its own
			}
			if err != nil {
				return err
			}
			n := *cur.Spec.Replicas
			cur.Status = appsv1.DeploymentStatus{ObservedGeneration: cur.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
			_, err = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}()
}

// noteLocked records the fleet's available replicas now.
func (c *fakeDeployments) noteLocked() {
	var total int32
	for _, n := range c.available {
		total += n
	}
	c.lowest = min(c.lowest, total)
}

func (c *fakeDeployments) resetLowest() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lowest = 1 << 30
	c.noteLocked()
}

func (c *fakeDeployments) lowestAvailable() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lowest
}

// waitFor waits until the copies' available replicas (by spoke index) satisfy done, and every
// copy's spec is met.
func (c *fakeDeployments) waitFor(done func(map[int]int32) bool) error {
	deadline := time.Now().Add(deliveryTimeout)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		ok := done(c.available)
		for i, n := range c.wanted {
			ok = ok && c.available[i] == n
		}
		c.mu.Unlock()
		if ok {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Errorf("after %s: available %v, wanted %v", deliveryTimeout, c.available, c.wanted)
}

func (c *fakeDeployments) stop() {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
}
