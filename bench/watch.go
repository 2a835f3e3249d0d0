package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// arrivals counts, per spoke, the distinct ConfigMaps of a namespace that satisfy a predicate,
// as their watch events arrive: the benchmark observes delivery, it does not poll for it.
type arrivals struct {
	mu     sync.Mutex
	first  time.Time // when the first object arrived anywhere
	seen   []map[string]bool
	cancel context.CancelFunc
	errs   chan error
}

func watchArrivals(ctx context.Context, spokes []kubernetes.Interface, namespace, selector string, pred func(*corev1.ConfigMap) bool) (*arrivals, error) {
	return follow(ctx, spokes,
		func(ctx context.Context, cs kubernetes.Interface) (watch.Interface, error) {
			return cs.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
		},
		func(o runtime.Object) (string, bool) {
			if cm, ok := o.(*corev1.ConfigMap); ok && pred(cm) {
				return cm.Name, true
			}
			return "", false
		})
}

// watchDeploymentArrivals counts the Deployments of a namespace as they arrive.
func watchDeploymentArrivals(ctx context.Context, spokes []kubernetes.Interface, namespace, selector string) (*arrivals, error) {
	return follow(ctx, spokes,
		func(ctx context.Context, cs kubernetes.Interface) (watch.Interface, error) {
			return cs.AppsV1().Deployments(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
		},
		func(o runtime.Object) (string, bool) {
			if d, ok := o.(*appsv1.Deployment); ok {
				return d.Name, true
			}
			return "", false
		})
}

// follow opens a watch on every spoke and counts the distinct objects that match.
func follow(ctx context.Context, spokes []kubernetes.Interface, open func(context.Context, kubernetes.Interface) (watch.Interface, error),
	match func(runtime.Object) (string, bool)) (*arrivals, error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &arrivals{seen: make([]map[string]bool, len(spokes)), cancel: cancel, errs: make(chan error, len(spokes))}
	for i, cs := range spokes {
		a.seen[i] = map[string]bool{}
		w, err := open(ctx, cs)
		if err != nil {
			cancel()
			return nil, err
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				name, ok := match(ev.Object)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				a.mu.Lock()
				if a.first.IsZero() {
					a.first = time.Now()
				}
				a.seen[i][name] = true
				a.mu.Unlock()
			}
		}()
	}
	return a, nil
}

// firstArrival returns when the first object arrived on any spoke.
func (a *arrivals) firstArrival() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.first
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
