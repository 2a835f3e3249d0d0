package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// drift: 50 out-of-band edits of delivered ConfigMaps on random spokes; latency from the edit
// to the revert, as the spoke's watch shows it.
func (b *bench) drift(ctx context.Context, r *report) error {
	const edits = 50
	var lat []time.Duration
	for i := range edits {
		spoke := b.spokes[rand.IntN(len(b.spokes))]
		name := configMap(1+rand.IntN(max(b.p.Objects-1, 1)), b.p, "").Name
		cms := spoke.CoreV1().ConfigMaps(ns)
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want := cm.Data["version"]
		cm.Data["version"] = fmt.Sprintf("drift-%d", i)
		start := time.Now()
		edited, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "bench-editor"})
		if err != nil {
			return err
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: edited.ResourceVersion})
		if err != nil {
			return err
		}
		reverted := false
		timeout := time.After(time.Minute)
		for !reverted {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return fmt.Errorf("watch of %s ended", name)
				}
				if c, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == watch.Modified && c.Data["version"] == want {
					reverted = true
				}
			case <-timeout:
				w.Stop()
				return fmt.Errorf("edit %d of %s not reverted within a minute", i, name)
			}
		}
		lat = append(lat, time.Since(start))
		w.Stop()
		time.Sleep(50 * time.Millisecond) // edits are spaced, as people make them
	}
	r.add("drift_p50", "ms", f(percentile(lat, 0.5)), nil, "spoke edit to revert, seen by a watch")
	r.add("drift_p99", "ms", f(percentile(lat, 0.99)), nil, "")
	return nil
}
