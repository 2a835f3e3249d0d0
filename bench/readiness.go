package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// stateActive is kro's status.state of an instance whose resources are all ready.
const stateActive = "ACTIVE"

// readiness records, from informers on some spokes, when each instance of a kind in a
// namespace was first seen and when it first showed status.state ACTIVE: the benchmark
// observes readiness as it happens, it does not poll for it. Instances are told apart by
// name alone, so names must not repeat across the spokes watched.
type readiness struct {
	mu      sync.Mutex
	seen    map[string]time.Time
	active  map[string]time.Time
	last    map[string]string // the last state and Ready message seen, for a timeout's error
	waiters map[string]chan struct{}
	cancel  context.CancelFunc
}

func watchReadiness(ctx context.Context, spokes []*rest.Config, gvr schema.GroupVersionResource, namespace string) (*readiness, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &readiness{seen: map[string]time.Time{}, active: map[string]time.Time{}, last: map[string]string{},
		waiters: map[string]chan struct{}{}, cancel: cancel}
	for _, cfg := range spokes {
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			cancel()
			return nil, err
		}
		factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, namespace, nil)
		informer := factory.ForResource(gvr).Informer()
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    r.observe,
			UpdateFunc: func(_, obj any) { r.observe(obj) },
		}); err != nil {
			cancel()
			return nil, err
		}
		factory.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			cancel()
			return nil, fmt.Errorf("watch %s on %s: not synced", gvr.Resource, cfg.Host)
		}
	}
	return r, nil
}

func (r *readiness) observe(obj any) {
	now := time.Now()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	r.mu.Lock()
	defer r.mu.Unlock()
	name := u.GetName()
	if _, ok := r.seen[name]; !ok {
		r.seen[name] = now
	}
	r.last[name] = fmt.Sprintf("state %q, Ready: %s", state, readyMessage(u))
	if _, done := r.active[name]; state == stateActive && !done {
		r.active[name] = now
		if ch, ok := r.waiters[name]; ok {
			close(ch)
		}
	}
}

// readyMessage is the reason and message of an instance's Ready condition.
func readyMessage(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
		}
	}
	return "none"
}

// wait returns when the named instance was first seen and first seen ACTIVE, or fails after
// timeout.
func (r *readiness) wait(name string, timeout time.Duration) (seen, active time.Time, err error) {
	r.mu.Lock()
	ch, ok := r.waiters[name]
	if !ok {
		ch = make(chan struct{})
		r.waiters[name] = ch
		if _, done := r.active[name]; done {
			close(ch)
		}
	}
	r.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		r.mu.Lock()
		defer r.mu.Unlock()
		last, ok := r.last[name]
		if !ok {
			last = "never seen"
		}
		return time.Time{}, time.Time{}, fmt.Errorf("instance %s not %s after %s (%s)", name, stateActive, timeout, last)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[name], r.active[name], nil
}

func (r *readiness) stop() { r.cancel() }
