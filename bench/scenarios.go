package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

const deliveryTimeout = 10 * time.Minute

// bulk: time from creating the Propagation to every object on every spoke, against the direct
// client applying the same objects to fresh namespaces of the same spokes; then memory.
func (b *bench) bulk(ctx context.Context, r *report) error {
	idleRSS := rssBytes(b.proc.pid())
	idleHeap, err := b.prof.liveHeap()
	if err != nil {
		return fmt.Errorf("read the hub's heap: %w", err)
	}
	// What heap_per_pair counts is the difference from this profile to bulk's:
	// go tool pprof -sample_index=inuse_space -diff_base bulk-idle.heap.pprof bulk.heap.pprof
	b.prof.heap("bulk-idle")
	a, err := watchArrivals(ctx, b.spokes, ns, selector, hasVersion("v0"))
	if err != nil {
		return err
	}
	spokeProfile := b.prof.spokeCPU(ctx, b.spokes[0], "bulk-spoke-apiserver", 10)
	start, meter := time.Now(), startCPUMeter(b.cpuGroups())
	if err := b.hub.Create(ctx, benchPropagation()); err != nil {
		return err
	}
	if err := a.wait(b.p.Objects, deliveryTimeout); err != nil {
		return err
	}
	flotilla, flotillaEnd := time.Since(start).Seconds(), time.Now()
	firstFlotilla, flotillaCPU := a.firstArrival().Sub(start).Seconds(), meter.String()
	writes, reads, err := b.spokeRequests(start)
	if err != nil {
		return err
	}
	flotillaLoad, err := measureLoad(b.pushSpokes(), start, flotillaEnd)
	if err != nil {
		return err
	}

	base, err := watchArrivals(ctx, b.spokes, baseNS, selector, hasVersion("v0"))
	if err != nil {
		return err
	}
	spokeProfile()
	spokeProfile = b.prof.spokeCPU(ctx, b.spokes[0], "bulk-direct-spoke-apiserver", 10)
	defer spokeProfile()
	start, meter = time.Now(), startCPUMeter(b.cpuGroups())
	if err := b.eachSpoke(func(cs kubernetes.Interface) error { return applyAll(ctx, cs, baseNS, b.p, "v0") }); err != nil {
		return err
	}
	if err := base.wait(b.p.Objects, deliveryTimeout); err != nil {
		return err
	}
	direct, directCPU := time.Since(start).Seconds(), meter.String()
	directLoad, err := measureLoad(b.pushSpokes(), start, time.Now())
	if err != nil {
		return err
	}
	r.add("bulk", "s", f(flotilla), f(direct),
		fmt.Sprintf("%d spokes; first object after %.2f s; %d writes and %d reads to spokes; %s (direct: first after %.2f s; %s)",
			b.p.Spokes, firstFlotilla, writes, reads, flotillaCPU, base.firstArrival().Sub(start).Seconds(), directCPU))
	r.addLoad("bulk", flotillaLoad, directLoad)

	if err := b.waitApplied(ctx); err != nil {
		return err
	}
	pairs := float64(b.p.Objects * b.p.Spokes)
	r.add("bytes_per_pair", "B", f((float64(rssBytes(b.proc.pid()))-float64(idleRSS))/pairs), nil, "hub controller RSS above idle per (object, cluster); target ≤ 10 KiB")
	heap, err := b.prof.liveHeap()
	if err != nil {
		return fmt.Errorf("read the hub's heap: %w", err)
	}
	r.add("heap_per_pair", "B", f((float64(heap)-float64(idleHeap))/pairs), nil, "hub controller live Go heap above idle per (object, cluster)")
	records, revisions, err := b.durableBytes(ctx)
	if err != nil {
		return fmt.Errorf("measure what the hub stores: %w", err)
	}
	r.add("hub_bytes_per_pair", "B", f(float64(records+revisions)/pairs), nil,
		fmt.Sprintf("JSON bytes the hub stores of the per-cluster work per (object, cluster): Delivery records %d B, revisions %d B", records, revisions))
	return nil
}

// update: latency of one hub edit to the last spoke, against a direct apply to every spoke.
func (b *bench) update(ctx context.Context, r *report) error {
	flot, base, err := b.updateLatencies(ctx, 50)
	if err != nil {
		return err
	}
	r.add("update_p50", "ms", f(percentile(flot, 0.5)), f(percentile(base, 0.5)), "")
	r.add("update_p99", "ms", f(percentile(flot, 0.99)), f(percentile(base, 0.99)), "")
	return nil
}

// updateLatencies makes spaced edits of one hub object and returns, for each, the time from
// the hub write to the last spoke's watch showing it, and the same for a direct apply to
// every spoke.
func (b *bench) updateLatencies(ctx context.Context, edits int) (flot, base []time.Duration, err error) {
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return nil, nil, err
	}
	for i := range edits {
		version := fmt.Sprintf("u%d", i)
		one := func(cm *corev1.ConfigMap) bool { return cm.Name == "cm-00000" && cm.Data["version"] == version }
		a, err := watchArrivals(ctx, b.spokes, ns, selector, one)
		if err != nil {
			return nil, nil, err
		}
		start := time.Now()
		if err := applyOne(ctx, hubCS, ns, configMap(0, b.p, version)); err != nil {
			return nil, nil, err
		}
		if err := a.wait(1, time.Minute); err != nil {
			return nil, nil, err
		}
		flot = append(flot, time.Since(start))

		a, err = watchArrivals(ctx, b.spokes, baseNS, selector, one)
		if err != nil {
			return nil, nil, err
		}
		start = time.Now()
		if err := b.eachSpoke(func(cs kubernetes.Interface) error { return applyOne(ctx, cs, baseNS, configMap(0, b.p, version)) }); err != nil {
			return nil, nil, err
		}
		if err := a.wait(1, time.Minute); err != nil {
			return nil, nil, err
		}
		base = append(base, time.Since(start))
		time.Sleep(100 * time.Millisecond) // edits are spaced, as users make them
	}
	return flot, base, nil
}

// steady: a 60 s idle window with a controller restart in the middle; Flotilla's writes to
// every plane (target 0) and its reads per spoke per second.
func (b *bench) steady(ctx context.Context, r *report) error {
	if err := b.waitApplied(ctx); err != nil {
		return err
	}
	const window = 60 * time.Second
	start := time.Now()
	time.Sleep(window / 3)
	b.proc.stop()
	proc, err := startHub(b.binDir, b.hubKC, b.hubArgs()...)
	if err != nil {
		return err
	}
	b.proc = proc
	time.Sleep(time.Until(start.Add(window)))
	writes, reads := 0, 0
	var examples []string
	for _, p := range b.measuredPlanes() {
		events, err := p.AuditEvents()
		if err != nil {
			return err
		}
		for _, ev := range events {
			if ev.StageTimestamp.Before(start) || !strings.HasPrefix(ev.UserAgent, "flotilla") {
				continue
			}
			if ev.Mutating() {
				writes++
				if len(examples) < 3 {
					examples = append(examples, fmt.Sprintf("%s %s %s/%s on %s", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name, p.Name()))
				}
			} else if p.Spec().Role == localfleet.RoleSpoke && (ev.Verb == "get" || ev.Verb == "list") {
				reads++
			}
		}
	}
	note := "mutating requests to hub and spokes in 60 s with a restart; target 0"
	if len(examples) > 0 {
		note += "; e.g. " + strings.Join(examples, ", ")
	}
	r.add("steady_writes", "requests", f(float64(writes)), nil, note)
	r.add("steady_reads", "req/s/spoke", f(float64(reads)/window.Seconds()/float64(b.p.Spokes)), nil, "GET/LIST per spoke while idle, restart included; target ≤ 0.2")
	return nil
}

// outage: stop spokes, change objects, start them; time to reconverge, and writes to the
// spokes that stayed up beyond the changed objects.
func (b *bench) outage(ctx context.Context, r *report) error {
	down := min(2, b.p.Spokes-1)
	changed := min(100, b.p.Objects)
	if down < 1 {
		r.add("outage_reconverge", "s", nil, nil, "needs at least 2 spokes")
		r.add("outage_extra_writes", "requests", nil, nil, "needs at least 2 spokes")
		return nil
	}
	stopped := b.pushSpokes()[:down]
	for _, s := range stopped {
		s.Stop()
	}
	up := b.spokes[down:]
	a, err := watchArrivals(ctx, up, ns, selector, hasVersion("o1"))
	if err != nil {
		return err
	}
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return err
	}
	mark := time.Now()
	if err := applyRange(ctx, hubCS, ns, b.p, "o1", changed); err != nil {
		return err
	}
	if err := a.wait(changed, deliveryTimeout); err != nil {
		return err
	}
	for _, s := range stopped {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	started := time.Now()
	back, err := watchArrivals(ctx, b.spokes[:down], ns, selector, hasVersion("o1"))
	if err != nil {
		return err
	}
	if err := back.wait(changed, deliveryTimeout); err != nil {
		return err
	}
	reconverge := time.Since(started).Seconds()
	extra := 0
	for _, s := range b.pushSpokes()[down:] {
		events, err := s.AuditEvents()
		if err != nil {
			return err
		}
		n := 0
		for _, ev := range events {
			if ev.StageTimestamp.After(mark) && ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") {
				n++
			}
		}
		extra += n - changed
	}
	r.add("outage_reconverge", "s", f(reconverge), nil, fmt.Sprintf("%d spokes stopped while %d objects changed", down, changed))
	r.add("outage_extra_writes", "requests", f(float64(extra)), nil, "writes to spokes that stayed up beyond the changed objects; target 0")
	return nil
}

// waitApplied waits until the Propagation reports every cluster applied and its status has
// settled (unchanged for settle): the end of the last change burst, not a moment inside it.
func (b *bench) waitApplied(ctx context.Context) error {
	const settle = 5 * time.Second
	deadline := time.Now().Add(deliveryTimeout)
	lastRV, since := "", time.Now()
	for time.Now().Before(deadline) {
		p := &flotillav1.Propagation{}
		if err := b.hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bench"}, p); err == nil {
			c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied)
			if p.ResourceVersion != lastRV {
				lastRV, since = p.ResourceVersion, time.Now()
			}
			if c != nil && c.Status == metav1.ConditionTrue && int(p.Status.AppliedClusters) == b.p.Spokes && time.Since(since) > settle {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("propagation not Applied on every cluster")
}

// spokeRequests counts Flotilla's writes and reads to every spoke since a time, from the audit
// logs.
func (b *bench) spokeRequests(since time.Time) (writes, reads int, err error) {
	for _, p := range b.pushSpokes() {
		w, r, err := requestsBy(p, "flotilla", since)
		if err != nil {
			return 0, 0, err
		}
		writes, reads = writes+w, reads+r
	}
	return writes, reads, nil
}

// cpuGroups are the processes whose CPU the bulk scenario accounts for.
func (b *bench) cpuGroups() []cpuGroup {
	groups := []cpuGroup{{name: "controller", pids: []int{b.proc.pid()}}, {name: "bench", pids: []int{os.Getpid()}},
		{name: "hub plane"}, {name: "spoke apiservers"}, {name: "spoke etcds"}}
	for _, pid := range b.fleet.Hub().PIDs() {
		groups[2].pids = append(groups[2].pids, pid)
	}
	for _, s := range b.pushSpokes() {
		pids := s.PIDs()
		groups[3].pids = append(groups[3].pids, pids["kube-apiserver"])
		groups[4].pids = append(groups[4].pids, pids["etcd"])
	}
	return groups
}

// eachSpoke runs fn for every spoke in parallel.
func (b *bench) eachSpoke(fn func(kubernetes.Interface) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, cs := range b.spokes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(cs); err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}
