package main

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

const (
	// failoverReplicas is the fleet-wide size of the failed-over Deployment.
	failoverReplicas = 20
	// unhealthyAfter is the failover Placement's moves.clusterUnhealthyAfter: short, so the
	// scenario is quick; it is subtracted from the measured time, which is what Flotilla adds
	// to the threshold a user chose.
	unhealthyAfter = 5 * time.Second
	// probeInterval is how often `flotilla hub` probes a healthy spoke (its --probe-interval,
	// left at its default by the benchmark): a stopped spoke is noticed at the next probe,
	// up to this long after the stop.
	probeInterval = 10 * time.Second
)

// failover: a transparent-mode Deployment of failoverReplicas replicas divided evenly
// (Weighted) over every spoke by a Placement with moves.clusterUnhealthyAfter; the last spoke
// is stopped. failover_ready is the seconds from the stop until the other spokes' copies have
// every replica available, minus clusterUnhealthyAfter; it includes the wait for the next
// health probe (0 to probeInterval), which failover_after_detect leaves out. The stopped spoke
// is started again at the end; failback is Manual, so its copy is scaled down and stays so,
// and the next scenarios start with every spoke engaged and the fleet settled.
func (b *bench) failover(ctx context.Context, r *report) error {
	if b.p.Spokes < 2 {
		r.add("failover_ready", "s", nil, nil, "needs at least 2 spokes")
		r.add("failover_after_detect", "s", nil, nil, "needs at least 2 spokes")
		return nil
	}
	if err := b.hub.Create(ctx, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "failover", Namespace: ns},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted},
			Moves: &flotillav1.MovePolicy{ClusterUnhealthyAfter: &metav1.Duration{Duration: unhealthyAfter},
				Failback: flotillav1.FailbackManual}}}); err != nil {
		return err
	}
	ctl := newFakeDeployments(b.spokes, "survivor")
	defer ctl.stop()
	if err := ctl.start(ctx); err != nil {
		return err
	}
	sel := map[string]string{"app": "survivor"}
	if err := b.hub.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: ns, Labels: map[string]string{flotillav1.LabelPlacement: "failover"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](failoverReplicas), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/bench/app:v0"}}}}},
	}); err != nil {
		return err
	}
	placed := map[int]int32{}
	if err := ctl.waitFor(func(copies map[int]int32) bool {
		placed = maps.Clone(copies)
		return len(copies) == len(b.spokes) && sum(copies) == failoverReplicas
	}); err != nil {
		return fmt.Errorf("survivor on every spoke: %w", err)
	}
	// The last spoke with a share is stopped: with more spokes than replicas, the last ones
	// have none, and stopping one of them would move nothing.
	down := len(b.spokes) - 1
	for down > 0 && placed[down] == 0 {
		down--
	}
	stopped := b.pushSpokes()[down]
	seen := b.watchFailover(ctx, stopped.Name())
	start := time.Now()
	stopped.Stop()
	if err := ctl.waitFor(func(copies map[int]int32) bool {
		var elsewhere int32
		for i, n := range copies {
			if i != down {
				elsewhere += n
			}
		}
		return elsewhere == failoverReplicas
	}); err != nil {
		return fmt.Errorf("survivor's replicas on the other spokes: %w", err)
	}
	took := time.Since(start)
	notReady, failedOver := seen()

	back := time.Now()
	if err := stopped.Start(ctx); err != nil {
		return err
	}
	started := time.Since(back)
	if err := ctl.waitFor(func(copies map[int]int32) bool { return copies[down] == 0 && sum(copies) == failoverReplicas }); err != nil {
		return fmt.Errorf("survivor's stranded copy scaled down: %w", err)
	}
	trimmed := time.Since(back)
	deletes, err := b.deletesOf(stopped.Name(), "survivor", start)
	if err != nil {
		return err
	}
	if err := b.waitApplied(ctx); err != nil {
		return err
	}
	var reaction *float64
	if !notReady.IsZero() {
		reaction = f((took - notReady.Sub(start) - unhealthyAfter).Seconds())
	}
	r.add("failover_ready", "s", f((took - unhealthyAfter).Seconds()), nil,
		fmt.Sprintf("1 of %d spokes stopped: its share of %d replicas available elsewhere after %.1f s, minus clusterUnhealthyAfter %s; "+
			"seen not Ready after %s and FailedOver after %s (probe every %s; readiness takes %s); back (its API server ready in %.1f s), its copy scaled to 0 in %.1f s with %d deletes",
			len(b.spokes), failoverReplicas, took.Seconds(), unhealthyAfter, since(start, notReady), since(start, failedOver),
			probeInterval, readyDelay, started.Seconds(), trimmed.Seconds(), deletes))
	r.add("failover_after_detect", "s", reaction, nil,
		"the same from when the hub first showed the Cluster not Ready: Flotilla's reaction without the wait for the next probe")
	return nil
}

// watchFailover polls the hub until the returned function is called, and that function
// returns when the cluster was first seen not Ready and first seen FailedOver in the failover
// Placement (zero when never); the times are read once the polling has ended.
func (b *bench) watchFailover(ctx context.Context, cluster string) func() (notReady, failedOver time.Time) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg                   sync.WaitGroup
		notReady, failedOver time.Time
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			c := &flotillav1.Cluster{}
			if err := b.hub.Get(ctx, client.ObjectKey{Name: cluster}, c); err == nil && !meta.IsStatusConditionTrue(c.Status.Conditions, flotillav1.ClusterReady) {
				if notReady.IsZero() {
					notReady = time.Now()
				}
			}
			pl := &flotillav1.Placement{}
			if err := b.hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "failover"}, pl); err == nil {
				for _, d := range pl.Status.Decisions {
					if d.ClusterName == cluster && d.State == flotillav1.DecisionFailedOver {
						if failedOver.IsZero() {
							failedOver = time.Now()
						}
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() (time.Time, time.Time) {
		cancel()
		wg.Wait()
		return notReady, failedOver
	}
}

// since says how long after start t was, or that it was not seen.
func since(start, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.1f s", t.Sub(start).Seconds())
}

// deletesOf counts Flotilla's deletes of a Deployment on a spoke since a time, from its audit
// log: health alone must never delete.
func (b *bench) deletesOf(spoke, name string, since time.Time) (int, error) {
	events, err := b.fleet.Plane(spoke).AuditEvents()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ev := range events {
		if ev.StageTimestamp.After(since) && ev.Verb == "delete" && strings.HasPrefix(ev.UserAgent, "flotilla") &&
			ev.ObjectRef.Resource == "deployments" && ev.ObjectRef.Name == name {
			n++
		}
	}
	return n, nil
}
