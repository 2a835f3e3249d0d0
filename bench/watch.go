package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// arrivals counts, per spoke, the distinct ConfigMaps of a namespace that satisfy a predicate,
// as their watch events arrive: the benchmark observes delivery, it does not poll for it.
type arrivals struct {
	mu     sync.Mutex
	seen   []map[string]bool
	cancel context.CancelFunc
	errs   chan error
}

func watchArrivals(ctx context.Context, spokes []kubernetes.Interface, namespace, selector string, pred func(*corev1.ConfigMap) bool) (*arrivals, error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &arrivals{seen: make([]map[string]bool, len(spokes)), cancel: cancel, errs: make(chan error, len(spokes))}
	for i, cs := range spokes {
		a.seen[i] = map[string]bool{}
		w, err := cs.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			cancel()
			return nil, err
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) || !pred(cm) {
					continue
				}
				a.mu.Lock()
				a.seen[i][cm.Name] = true
				a.mu.Unlock()
			}
		}()
	}
	return a, nil
}

// wait returns when every spoke has seen want ConfigMaps, or fails after timeout.
func (a *arrivals) wait(want int, timeout time.Duration) error {
	defer a.cancel()
	deadline := time.Now().Add(timeout)
	for {
		a.mu.Lock()
		done, least := true, want
		for _, s := range a.seen {
			if len(s) < want {
				done = false
			}
			least = min(least, len(s))
		}
		a.mu.Unlock()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s the slowest spoke has %d of %d objects", timeout, least, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
