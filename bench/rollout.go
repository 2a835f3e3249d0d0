package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The rollout scenario: one ConfigMap rolled out over every spoke in three stages (the first
// fifth of the spokes, the next three tenths, the rest), one cluster at a time, soak 0, against
// the same change delivered at once by a Placement without a rollout. rollout_gate_p99 is the
// gate's own latency: a cluster's copy arriving (a ConfigMap is Ready when it is there) to the
// next cluster's copy arriving, over rolloutRounds changes; rollout_total is a whole rollout.
const (
	rolloutNS     = "rollout-bench"
	plainNS       = "rollout-plain"
	rolloutRounds = 3
)

func (b *bench) rollout(ctx context.Context, r *report) error {
	names := make([]string, 0, len(b.pushSpokes()))
	for _, s := range b.pushSpokes() {
		names = append(names, s.Name())
	}
	first, second := max(len(names)/5, 1), max(len(names)*3/10, 1)
	stages := []flotillav1.RolloutStage{{Name: "first", ClusterNames: names[:first]}}
	if first+second < len(names) {
		stages = append(stages, flotillav1.RolloutStage{Name: "second", ClusterNames: names[first : first+second]})
	}
	for _, set := range []struct {
		namespace string
		rollout   *flotillav1.RolloutPolicy
	}{{rolloutNS, &flotillav1.RolloutPolicy{Stages: stages}}, {plainNS, nil}} {
		for _, obj := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: set.namespace}},
			&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: set.namespace},
				Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, Rollout: set.rollout}},
			releaseConfigMap(set.namespace, "r0"),
			&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: set.namespace},
				Spec: flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "release"}},
					PlacementRef: flotillav1.PlacementRef{Name: "staged"}}},
		} {
			if err := b.hub.Create(ctx, obj); err != nil {
				return err
			}
		}
	}
	for _, namespace := range []string{rolloutNS, plainNS} {
		if _, err := b.releaseArrivals(ctx, namespace, "r0", func() error { return nil }); err != nil {
			return fmt.Errorf("first delivery of %s: %w", namespace, err)
		}
	}
	var gaps, totals, plain []time.Duration
	for round := 1; round <= rolloutRounds; round++ {
		version := fmt.Sprintf("r%d", round)
		for _, namespace := range []string{rolloutNS, plainNS} {
			start := time.Now()
			at, err := b.releaseArrivals(ctx, namespace, version, func() error { return b.setRelease(ctx, namespace, version) })
			if err != nil {
				return fmt.Errorf("%s, change %s: %w", namespace, version, err)
			}
			slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
			if namespace == plainNS {
				plain = append(plain, at[len(at)-1].Sub(start))
				continue
			}
			totals = append(totals, at[len(at)-1].Sub(start))
			if err := b.waitRolloutReported(ctx, version); err != nil {
				return err
			}
			for i := 1; i < len(at); i++ {
				gaps = append(gaps, at[i].Sub(at[i-1]))
			}
		}
	}
	r.add("rollout_gate_p99", "ms", f(percentile(gaps, 0.99)), nil, fmt.Sprintf("a cluster's copy arriving → the next cluster's, one at a time, soak 0, %d gaps; p50 %.0f ms; target ≤ 200", len(gaps), percentile(gaps, 0.5)))
	r.add("rollout_total", "s", f(percentile(totals, 0.5)/1000), f(percentile(plain, 0.5)/1000),
		fmt.Sprintf("%d spokes in %d stages one at a time (p50 of %d changes); baseline: the same change with no rollout", len(names), len(stages)+1, rolloutRounds))
	return nil
}

// waitRolloutReported waits until the staged Propagation's status reports its rollout's stages:
// the status is written after the deliveries, so on a busy fleet it can still show the
// previous change's when the last spoke already has this one.
func (b *bench) waitRolloutReported(ctx context.Context, version string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := &flotillav1.Propagation{}
		if err := b.hub.Get(ctx, client.ObjectKey{Namespace: rolloutNS, Name: "release"}, p); err != nil {
			return err
		}
		if r := p.Status.Rollout; r != nil && r.Stages != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("change %s reached every spoke, but 30 s later the Propagation reports no rollout: %+v", version, p.Status.Rollout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func releaseConfigMap(namespace, version string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: namespace}, Data: map[string]string{"version": version}}
}

// setRelease changes the version of a namespace's release ConfigMap on the hub.
func (b *bench) setRelease(ctx context.Context, namespace, version string) error {
	patch := fmt.Sprintf(`{"data":{"version":%q}}`, version)
	return b.hub.Patch(ctx, releaseConfigMap(namespace, ""), client.RawPatch("application/merge-patch+json", []byte(patch)))
}

// releaseArrivals runs change, then returns when each spoke's watch saw the namespace's release
// ConfigMap at version (within two minutes).
func (b *bench) releaseArrivals(ctx context.Context, namespace, version string, change func() error) ([]time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	at := make([]time.Time, len(b.spokes))
	done := make(chan int, len(b.spokes))
	for i, cs := range b.spokes {
		w, err := watchRelease(ctx, cs, namespace)
		if err != nil {
			return nil, err
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) || cm.Data["version"] != version {
					continue
				}
				mu.Lock()
				at[i] = time.Now()
				mu.Unlock()
				done <- i
				return
			}
		}()
	}
	if err := change(); err != nil {
		return nil, err
	}
	for range b.spokes {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, fmt.Errorf("not every spoke has version %s after 2 minutes", version)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(at), nil
}

func watchRelease(ctx context.Context, cs kubernetes.Interface, namespace string) (watch.Interface, error) {
	return cs.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=release"})
}
