package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/devenv"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

const (
	// pullPlane is the spoke the pull scenario delivers to through `flotilla agent`; it is
	// started only when that scenario runs, and is no part of the other scenarios' fleet.
	pullPlane = "spoke-pull"
	pullNS    = "bench-pull"
	// pullTaint keeps the pull cluster out of every other scenario's Placement; the pull
	// scenario's Placement tolerates it.
	pullTaint = "bench.flotilla.dev/pull"
	pullEdits = 50
)

// freeLoopbackAddr returns a free 127.0.0.1 port for `flotilla hub --work-bind-address`.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// pull: the same objects delivered to one push spoke (the first) and to one pull spoke, whose
// `flotilla agent` runs as a process of its own beside it, in the same run: bulk (the push
// spoke first, then the pull spoke, so neither shares the machine with the other), then 50
// hub edits seen by both spokes' watches, then 50 spoke-side edits on each, reverted by the
// hub for the push spoke and by the agent for the pull spoke. The FLOTILLA column is the pull
// spoke's figure, BASELINE the push spoke's. The agent's CPU seconds and peak RSS say what it
// costs on its spoke.
func (b *bench) pull(ctx context.Context, r *report) error {
	plane := b.fleet.Plane(pullPlane)
	defer plane.Stop() // the other scenarios do not use it
	if err := devenv.RegisterPull(ctx, b.hub, pullPlane, nil,
		[]flotillav1.ClusterTaint{{Key: pullTaint, Effect: flotillav1.TaintEffectNoExecute}}); err != nil {
		return err
	}
	ag, err := devenv.StartAgent(ctx, devenv.AgentOptions{
		Flotilla: filepath.Join(b.binDir, "flotilla"), Dir: plane.Dir(), Cluster: pullPlane, WorkURL: "http://" + b.workAddr,
		Hub: b.fleet.Hub().RESTConfig(), SpokeKubeconfig: plane.KubeconfigPath(),
	})
	if err != nil {
		return err
	}
	defer ag.Stop()
	b.agentLog = ag.LogPath()
	defer func() { b.agentLog = "" }()
	pushCS, push := b.spokes[0], b.pushSpokes()[0]
	pullCS, err := kubernetes.NewForConfig(plane.RESTConfig())
	if err != nil {
		return err
	}

	if err := b.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pullNS}}); err != nil {
		return err
	}
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return err
	}
	fmt.Printf("creating %d ConfigMaps on the hub for %s (push) and %s (pull)...\n", b.p.Objects, push.Name(), pullPlane)
	if err := applyAll(ctx, hubCS, pullNS, b.p, "v0"); err != nil {
		return err
	}
	agentCPU := cpuGroup{name: "agent", pids: []int{ag.PID()}}

	// Bulk: the push spoke, then the pull spoke.
	bulk := func(name, cluster string, cs kubernetes.Interface, tolerate bool) (float64, string, error) {
		pl := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pullNS},
			Spec: flotillav1.PlacementSpec{ClusterNames: []string{cluster}}}
		if tolerate {
			pl.Spec.Tolerations = []flotillav1.Toleration{{Key: pullTaint, Operator: flotillav1.TolerationOpExists}}
		}
		if err := b.hub.Create(ctx, pl); err != nil {
			return 0, "", err
		}
		a, err := watchArrivals(ctx, []kubernetes.Interface{cs}, pullNS, selector, hasVersion("v0"))
		if err != nil {
			return 0, "", err
		}
		start := time.Now()
		meter := startCPUMeter([]cpuGroup{{name: "controller", pids: []int{b.proc.pid()}}, agentCPU,
			{name: "spoke apiserver", pids: []int{b.fleet.Plane(cluster).PIDs()["kube-apiserver"]}}})
		if err := b.hub.Create(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pullNS},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: name},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}}}}}}); err != nil {
			return 0, "", err
		}
		if err := a.wait(b.p.Objects, deliveryTimeout); err != nil {
			return 0, "", fmt.Errorf("%s: %w", cluster, err)
		}
		took := time.Since(start).Seconds()
		return took, fmt.Sprintf("first object after %.2f s; %s", a.firstArrival().Sub(start).Seconds(), meter), nil
	}
	fmt.Printf("delivering them to %s (push)...\n", push.Name())
	pushBulk, pushNote, err := bulk("push", push.Name(), pushCS, false)
	if err != nil {
		return err
	}
	fmt.Printf("delivering them to %s (pull)...\n", pullPlane)
	bulkStart := time.Now()
	agentBefore := agentCPU.cpu()
	pullBulk, pullNote, err := bulk("pull", pullPlane, pullCS, true)
	if err != nil {
		return err
	}
	agentBulk := agentCPU.cpu() - agentBefore
	pullWrites, pullReads, err := requestsBy(plane, agent.UserAgent, bulkStart)
	if err != nil {
		return err
	}

	// Update: one hub edit, seen by both spokes' watches.
	fmt.Printf("%d hub edits seen on both spokes...\n", pullEdits)
	agentBefore = agentCPU.cpu()
	phaseStart := time.Now()
	var pushUpd, pullUpd []time.Duration
	for i := range pullEdits {
		version := fmt.Sprintf("u%d", i)
		start := time.Now()
		pushAt, err := arrival(ctx, pushCS, "cm-00000", version)
		if err != nil {
			return err
		}
		pullAt, err := arrival(ctx, pullCS, "cm-00000", version)
		if err != nil {
			return err
		}
		if err := applyOne(ctx, hubCS, pullNS, configMap(0, b.p, version)); err != nil {
			return err
		}
		for _, got := range []struct {
			at  <-chan time.Time
			lat *[]time.Duration
		}{{pushAt, &pushUpd}, {pullAt, &pullUpd}} {
			select {
			case t := <-got.at:
				*got.lat = append(*got.lat, t.Sub(start))
			case <-time.After(time.Minute):
				return fmt.Errorf("hub edit %d not on both spokes within a minute", i)
			}
		}
		// Edits are spaced, as users make them, by a random share of the agent's poll interval
		// besides: an edit made a fixed time after the last arrival would fall at the same
		// point of every poll cycle and measure that point only.
		time.Sleep(100*time.Millisecond + rand.N(agent.DefaultPollInterval))
	}
	agentUpdate, updateWall := agentCPU.cpu()-agentBefore, time.Since(phaseStart)

	// Drift: spoke-side edits, reverted by the hub on the push spoke, by the agent on the pull spoke.
	fmt.Printf("%d spoke-side edits on each spoke...\n", pullEdits)
	agentBefore = agentCPU.cpu()
	var pushDrift, pullDrift []time.Duration
	for i := range pullEdits {
		name := configMap(1+i%max(b.p.Objects-1, 1), b.p, "").Name
		d, err := driftOnce(ctx, pushCS, pullNS, name, i)
		if err != nil {
			return fmt.Errorf("%s: %w", push.Name(), err)
		}
		pushDrift = append(pushDrift, d)
		if d, err = driftOnce(ctx, pullCS, pullNS, name, i); err != nil {
			return fmt.Errorf("%s: %w", pullPlane, err)
		}
		pullDrift = append(pullDrift, d)
		time.Sleep(50 * time.Millisecond)
	}
	agentDrift := agentCPU.cpu() - agentBefore

	// Idle: what the agent costs while nothing changes (it asks for the work every poll interval).
	const idle = 10 * time.Second
	agentBefore = agentCPU.cpu()
	time.Sleep(idle)
	agentIdle := (agentCPU.cpu() - agentBefore) / idle.Seconds() * 100
	peakRSS := float64(procKiB(ag.PID(), "VmHWM")) / 1024

	// The push spoke is the first spoke of the other scenarios: take this scenario's objects
	// off it before they run. (The pull spoke and its agent stop with this scenario.)
	if err := b.removePropagation(ctx, pullNS, "push"); err != nil {
		return err
	}

	r.add("pull_bulk", "s", f(pullBulk), f(pushBulk), fmt.Sprintf("FLOTILLA: 1 pull spoke (agent, default --poll-interval %s), BASELINE: 1 push spoke, %d objects each, one after the other; pull: %s; push: %s",
		agent.DefaultPollInterval, b.p.Objects, pullNote, pushNote))
	r.add("pull_update_p50", "ms", f(percentile(pullUpd, 0.5)), f(percentile(pushUpd, 0.5)), fmt.Sprintf("%d hub edits of one object, seen by both spokes' watches", pullEdits))
	r.add("pull_update_p99", "ms", f(percentile(pullUpd, 0.99)), f(percentile(pushUpd, 0.99)), "")
	r.add("pull_drift_p50", "ms", f(percentile(pullDrift, 0.5)), f(percentile(pushDrift, 0.5)), fmt.Sprintf("%d spoke edits on each: reverted by the agent on the pull spoke, by the hub on the push spoke", pullEdits))
	r.add("pull_drift_p99", "ms", f(percentile(pullDrift, 0.99)), f(percentile(pushDrift, 0.99)), "")
	r.add("pull_agent_cpu", "CPU-s", f(agentBulk), nil, fmt.Sprintf("the agent's CPU on its spoke: %.1f s for the bulk delivery (%d writes, %d reads to the spoke), %.1f s for %d hub edits in %.0f s, %.1f s for %d drift reverts; idle %.1f%% of a core",
		agentBulk, pullWrites, pullReads, agentUpdate, pullEdits, updateWall.Seconds(), agentDrift, pullEdits, agentIdle))
	r.add("pull_agent_rss", "MiB", f(peakRSS), nil, fmt.Sprintf("the agent's peak RSS (VmHWM) with %d objects delivered", b.p.Objects))
	return nil
}

// arrival watches one ConfigMap of the pull scenario on a spoke and sends the time its watch
// shows the version; the watch ends then, or after a minute.
func arrival(ctx context.Context, cs kubernetes.Interface, name, version string) (<-chan time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	w, err := cs.CoreV1().ConfigMaps(pullNS).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		cancel()
		return nil, err
	}
	at := make(chan time.Time, 1)
	go func() {
		defer cancel()
		defer w.Stop()
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) && cm.Data["version"] == version {
				at <- time.Now()
				return
			}
		}
	}()
	return at, nil
}

// requestsBy counts the writes and reads to a plane since a time of the clients whose user agent
// starts with userAgent, from its audit log.
func requestsBy(p *localfleet.Plane, userAgent string, since time.Time) (writes, reads int, err error) {
	events, err := p.AuditEvents()
	if err != nil {
		return 0, 0, err
	}
	for _, ev := range events {
		if ev.StageTimestamp.Before(since) || !strings.HasPrefix(ev.UserAgent, userAgent) {
			continue
		}
		if ev.Mutating() {
			writes++
		} else {
			reads++
		}
	}
	return writes, reads, nil
}

// agentLogTail is the end of the pull scenario's agent log, for an error message.
func agentLogTail(path string) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return "\nflotilla agent log (tail):\n" + tail(string(data), 20)
}

// removePropagation deletes a Propagation and waits until it is gone, its objects removed from
// its clusters.
func (b *bench) removePropagation(ctx context.Context, namespace, name string) error {
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := b.hub.Delete(ctx, p); err != nil {
		return err
	}
	deadline := time.Now().Add(deliveryTimeout)
	for time.Now().Before(deadline) {
		if err := b.hub.Get(ctx, client.ObjectKeyFromObject(p), p); apierrors.IsNotFound(err) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("propagation %s/%s still there %s after its deletion", namespace, name, deliveryTimeout)
}
