package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// drift: 50 out-of-band edits of delivered ConfigMaps on random spokes; latency from the edit
// to the revert, as the spoke's watch shows it.
func (b *bench) drift(ctx context.Context, r *report) error {
	const edits = 50
	var lat []time.Duration
	for i := range edits {
		spoke := b.spokes[rand.IntN(len(b.spokes))]
		name := configMap(1+rand.IntN(max(b.p.Objects-1, 1)), b.p, "").Name
		d, err := driftOnce(ctx, spoke, ns, name, i)
		if err != nil {
			return err
		}
		lat = append(lat, d)
		time.Sleep(50 * time.Millisecond) // edits are spaced, as people make them
	}
	r.add("drift_p50", "ms", f(percentile(lat, 0.5)), nil, "spoke edit to revert, seen by a watch")
	r.add("drift_p99", "ms", f(percentile(lat, 0.99)), nil, "")
	return nil
}

// driftOnce edits a delivered ConfigMap on a spoke as someone there would (edit i) and returns
// how long until the spoke's watch shows it reverted.
func driftOnce(ctx context.Context, spoke kubernetes.Interface, namespace, name string, i int) (time.Duration, error) {
	cms := spoke.CoreV1().ConfigMaps(namespace)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	want := cm.Data["version"]
	cm.Data["version"] = fmt.Sprintf("drift-%d", i)
	start := time.Now()
	edited, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "bench-editor"})
	if err != nil {
		return 0, err
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: edited.ResourceVersion})
	if err != nil {
		return 0, err
	}
	reverted := false
	timeout := time.After(time.Minute)
	for !reverted {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("watch of %s ended", name)
			}
			if c, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == watch.Modified && c.Data["version"] == want {
				reverted = true
			}
		case <-timeout:
			w.Stop()
			return 0, fmt.Errorf("edit %d of %s not reverted within a minute", i, name)
		}
	}
	w.Stop()
	return time.Since(start), nil
}
