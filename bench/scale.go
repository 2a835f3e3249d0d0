package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// scaleEdits is how many hub edits each step of the scale scenario times, as update does.
const scaleEdits = 50

// scaleIdleWindow is how long each step of the scale scenario watches the converged fleet
// sitting idle, to count the requests Flotilla makes when nothing changes.
const scaleIdleWindow = 30 * time.Second

// scale: how the hub's costs grow with the number of clusters. Each step of --scale-steps
// (1,10,30 by default) is a fleet of its own with that many spokes, the same objects per spoke
// (--objects), and a fresh `flotilla hub`, measured with the helpers of the other scenarios:
// the controller's CPU seconds (/proc), its peak and steady RSS and live heap (pprof after a
// forced collection), Flotilla's writes to the hub and to the spokes (audit logs), update
// latency (the update scenario's edits, against the direct client), the requests it makes
// while the fleet is idle, and the watches it holds on each spoke (audit logs, counted as they
// end when the hub stops). The report gets the table and, per row, the least-squares slope per
// added cluster over the steps.
func runScale(ctx context.Context, p params, binDir string, prof *profiler, steps []int, r *report) error {
	t := &scaleTable{Steps: steps, Objects: p.Objects, Fit: "least squares over the steps (value = intercept + slope × spokes)"}
	var results []scaleStep
	for _, n := range steps {
		fmt.Printf("scale step: %d spokes × %d objects\n", n, p.Objects)
		s, err := scaleOne(ctx, p, n, binDir, prof)
		if err != nil {
			return fmt.Errorf("scale step %d spokes: %w", n, err)
		}
		results = append(results, s)
	}
	t.fill(results)
	r.Scale = t
	return nil
}

// scaleStep is what one step of the scale scenario measured.
type scaleStep struct {
	spokes                 int
	fleetStart             float64 // s
	idleRSS, idleHeap      float64 // MiB, Clusters Ready, nothing placed
	bulk, bulkCPU          float64 // s, CPU-s
	peakRSS, steadyRSS     float64 // MiB
	liveHeap               float64 // MiB
	goroutines             float64
	bulkHubWrites          float64
	bulkSpokeWrites        float64
	updateP50, updateP99   float64 // ms
	directP50, directP99   float64 // ms
	updateCPU              float64 // CPU-s for every edit
	updateWall             float64 // s, the edits' wall time, the direct client's included
	updateHubWrites        float64 // per edit
	updateSpokeWrites      float64 // per edit
	idleHubWrites          float64 // per s
	idleHubReads           float64 // per s
	idleSpokeRequests      float64 // per s, every spoke together
	idleCPU                float64 // cores: the controller's share of a core, idle
	idleSpokeCPU           float64 // cores: every spoke's API server and etcd together, idle
	spokeWatches, hubWatch float64
}

func scaleOne(ctx context.Context, p params, spokes int, binDir string, prof *profiler) (scaleStep, error) {
	s := scaleStep{spokes: spokes}
	p.Spokes = spokes
	dir, err := os.MkdirTemp("", "flotilla-bench-scale-")
	if err != nil {
		return s, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	started := time.Now()
	fleet, err := startFleet(ctx, dir, binDir, fleetPlanes(spokes, "", false))
	if err != nil {
		return s, err
	}
	defer fleet.Stop()
	s.fleetStart = time.Since(started).Seconds()
	b := &bench{p: p, binDir: binDir, dir: dir, fleet: fleet, hubKC: fleet.Hub().KubeconfigPath(), prof: prof}
	if err := b.setUp(ctx); err != nil {
		return s, err
	}
	defer func() {
		if b.proc != nil {
			b.proc.stop()
		}
	}()
	fail := func(what string, err error) (scaleStep, error) {
		return s, fmt.Errorf("%s: %w\nflotilla hub log (tail):\n%s", what, err, tail(b.proc.log.String(), 20))
	}

	// Idle: every Cluster Ready (its spoke engaged, its caches started), nothing placed.
	if err := b.waitClustersReady(ctx); err != nil {
		return fail("clusters ready", err)
	}
	pid := b.proc.pid()
	s.idleRSS = mib(rssBytes(pid))
	heap, err := prof.liveHeap()
	if err != nil {
		return fail("read the hub's heap", err)
	}
	s.idleHeap = mib(heap)

	// Bulk: every object onto every spoke, until the Propagation's status has settled.
	a, err := watchArrivals(ctx, b.spokes, ns, selector, hasVersion("v0"))
	if err != nil {
		return fail("watch", err)
	}
	start, cpu := time.Now(), processCPU(pid)
	if err := b.hub.Create(ctx, benchPropagation()); err != nil {
		return fail("create the Propagation", err)
	}
	if err := a.wait(p.Objects, deliveryTimeout); err != nil {
		return fail("bulk", err)
	}
	s.bulk = time.Since(start).Seconds()
	if err := b.waitApplied(ctx); err != nil {
		return fail("bulk", err)
	}
	s.bulkCPU = processCPU(pid) - cpu
	hubWrites, _, err := requestsBy(fleet.Hub(), "flotilla", start)
	if err != nil {
		return fail("hub audit log", err)
	}
	spokeWrites, _, err := b.spokeRequests(start)
	if err != nil {
		return fail("spoke audit logs", err)
	}
	s.bulkHubWrites, s.bulkSpokeWrites = float64(hubWrites), float64(spokeWrites)
	s.peakRSS, s.steadyRSS = float64(procKiB(pid, "VmHWM"))/1024, mib(rssBytes(pid))
	if heap, err = prof.liveHeap(); err != nil {
		return fail("read the hub's heap", err)
	}
	s.liveHeap = mib(heap)
	g, err := prof.goroutines()
	if err != nil {
		return fail("read the hub's goroutines", err)
	}
	s.goroutines = float64(g)

	// Idle window: what a converged fleet costs when nothing changes.
	groups := b.cpuGroups() // controller, bench, hub plane, spoke API servers, spoke etcds
	start, cpu = time.Now(), processCPU(pid)
	spokeCPU := groups[3].cpu() + groups[4].cpu()
	time.Sleep(scaleIdleWindow)
	hubWrites, hubReads, err := requestsBy(fleet.Hub(), "flotilla", start)
	if err != nil {
		return fail("hub audit log", err)
	}
	spokeWrites, spokeReads, err := b.spokeRequests(start)
	if err != nil {
		return fail("spoke audit logs", err)
	}
	window := time.Since(start).Seconds()
	s.idleCPU, s.idleSpokeCPU = (processCPU(pid)-cpu)/window, (groups[3].cpu()+groups[4].cpu()-spokeCPU)/window
	s.idleHubWrites, s.idleHubReads = float64(hubWrites)/window, float64(hubReads)/window
	s.idleSpokeRequests = float64(spokeWrites+spokeReads) / window

	// Update: the update scenario's spaced edits of one object.
	prof.cpu(fmt.Sprintf("scale-%d-update", spokes), 20) // with --profile
	start, cpu = time.Now(), processCPU(pid)
	flot, base, err := b.updateLatencies(ctx, scaleEdits)
	if err != nil {
		return fail("update", err)
	}
	s.updateCPU, s.updateWall = processCPU(pid)-cpu, time.Since(start).Seconds()
	prof.wait()
	s.updateP50, s.updateP99 = percentile(flot, 0.5), percentile(flot, 0.99)
	s.directP50, s.directP99 = percentile(base, 0.5), percentile(base, 0.99)
	if err := b.waitApplied(ctx); err != nil {
		return fail("update", err)
	}
	if hubWrites, _, err = requestsBy(fleet.Hub(), "flotilla", start); err != nil {
		return fail("hub audit log", err)
	}
	if spokeWrites, _, err = b.spokeRequests(start); err != nil {
		return fail("spoke audit logs", err)
	}
	s.updateHubWrites, s.updateSpokeWrites = float64(hubWrites)/scaleEdits, float64(spokeWrites)/scaleEdits

	// Watches: the hub's watches end when it stops, and the audit logs record each as it ends.
	stopped := time.Now()
	b.proc.stop()
	b.proc = nil
	spokeWatches, hubWatches, err := b.watchesEndedSince(ctx, stopped)
	if err != nil {
		return s, err
	}
	s.spokeWatches, s.hubWatch = float64(spokeWatches), float64(hubWatches)
	return s, nil
}

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// benchPropagation places every benchmark ConfigMap of the bench namespace on every cluster.
func benchPropagation() *flotillav1.Propagation {
	return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}}}}}}
}

// waitClustersReady waits until every push spoke's Cluster is Ready: engaged by the hub.
func (b *bench) waitClustersReady(ctx context.Context) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		list := &flotillav1.ClusterList{}
		ready := 0
		if err := b.hub.List(ctx, list); err == nil {
			for _, c := range list.Items {
				if meta.IsStatusConditionTrue(c.Status.Conditions, flotillav1.ClusterReady) {
					ready++
				}
			}
		}
		if ready >= len(b.pushSpokes()) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Clusters Ready after 5 minutes", ready, len(b.pushSpokes()))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// watchesEndedSince counts the watches by Flotilla that were open at a time and ended after it,
// on all push spokes together and on the hub: after the hub stops, the watches it held. The
// audit logs record a watch when it ends, so this waits until the count has stopped growing.
func (b *bench) watchesEndedSince(ctx context.Context, at time.Time) (spokes, hub int, err error) {
	count := func(p *localfleet.Plane) (int, error) {
		events, err := p.AuditEvents()
		if err != nil {
			return 0, err
		}
		n := 0
		for _, ev := range events {
			if ev.Verb == "watch" && strings.HasPrefix(ev.UserAgent, "flotilla") &&
				ev.RequestReceivedTimestamp.Before(at) && !ev.StageTimestamp.Before(at) {
				n++
			}
		}
		return n, nil
	}
	deadline, last, stable := time.Now().Add(30*time.Second), -1, 0
	for {
		spokes, hub = 0, 0
		for _, p := range b.pushSpokes() {
			n, err := count(p)
			if err != nil {
				return 0, 0, err
			}
			spokes += n
		}
		if hub, err = count(b.fleet.Hub()); err != nil {
			return 0, 0, err
		}
		if spokes+hub == last {
			stable++
		} else {
			stable, last = 0, spokes+hub
		}
		if stable >= 3 || time.Now().After(deadline) {
			return spokes, hub, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
