package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

const (
	ns       = "bench"
	baseNS   = "baseline"
	selector = "bench=yes"
	// perSpoke is how many applies the direct client sends to one spoke at once, as many as
	// one Flotilla delivery applies in parallel; like kubectl, it has no client-side rate
	// limit: the spoke's API Priority and Fairness is the only limit.
	perSpoke = 16
)

// bench holds what the scenarios share.
type bench struct {
	p      params
	binDir string
	dir    string // the run's scratch directory
	fleet  *localfleet.Fleet
	hubKC  string
	hub    client.Client
	spokes []kubernetes.Interface
	proc   *process
	prof   *profiler
	// workAddr is where the hub serves pull-mode agents their work, when the pull scenario runs.
	workAddr string
	// agentLog is the log of the pull scenario's agent while it runs.
	agentLog string
}

// stepNames are the scenario groups in the order they run; each may add several figures.
var stepNames = []string{"scale", "bulk", "bulk_one", "update", "drift", "pull", "dashboard", "steady", "restart", "outage", "move", "failover", "rollout", "instance_ready", "deployments", "takeover"}

// standalone steps need nothing of bulk's: run alone, they start from the bare fleet (scale
// starts fleets of its own).
var standalone = []string{"scale", "instance_ready", "rollout", "pull", "takeover"}

// optIn steps run only when --only names them: scale starts a fleet per step of
// --scale-steps, which would add minutes to every `make bench`; takeover replaces the hub
// controller with sharded replicas, which would take over every earlier scenario's objects too.
var optIn = []string{"scale", "takeover"}

// selectSteps parses --only: every step but the opt-in ones when empty.
func selectSteps(only string) ([]string, error) {
	if only == "" {
		return slices.DeleteFunc(slices.Clone(stepNames), func(s string) bool { return slices.Contains(optIn, s) }), nil
	}
	var steps []string
	for _, name := range strings.Split(only, ",") {
		if !slices.Contains(stepNames, name) {
			return nil, fmt.Errorf("--only: unknown scenario %q; choose from %s", name, strings.Join(stepNames, ","))
		}
		steps = append(steps, name)
	}
	needsBulk := slices.ContainsFunc(steps, func(s string) bool { return !slices.Contains(standalone, s) })
	if needsBulk && steps[0] != "bulk" {
		steps = append([]string{"bulk"}, steps...) // the others start from the fleet bulk leaves
	}
	return steps, nil
}

func run(ctx context.Context, p params, steps []string, binDir, profileDir string, scaleSteps []int) (*report, error) {
	prof, err := newProfiler(profileDir)
	if err != nil {
		return nil, err
	}
	r := newReport(p)
	if slices.Contains(steps, "scale") {
		// The scale scenario starts a fleet of its own per step, before the others' fleet.
		fmt.Println("scenario scale...")
		if err := runScale(ctx, p, binDir, prof, scaleSteps, r); err != nil {
			return nil, fmt.Errorf("scenario scale: %w", err)
		}
		if steps = slices.DeleteFunc(slices.Clone(steps), func(s string) bool { return s == "scale" }); len(steps) == 0 {
			return r, nil
		}
	}
	if len(steps) == 1 && steps[0] == "pull" && p.Spokes > 1 {
		// The pull scenario compares the pull spoke with one push spoke; more would only idle.
		fmt.Printf("--only pull: one push spoke beside the pull spoke (not %d)\n", p.Spokes)
		p.Spokes = 1
		r.Params.Spokes = 1
	}
	dir, err := os.MkdirTemp("", "flotilla-bench-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	workAddr := ""
	if slices.Contains(steps, "pull") {
		if workAddr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	fleet, err := startFleet(ctx, dir, binDir, fleetPlanes(p.Spokes, profileDir, slices.Contains(steps, "pull")))
	if err != nil {
		return nil, err
	}
	defer fleet.Stop()
	b := &bench{p: p, binDir: binDir, dir: dir, fleet: fleet, hubKC: fleet.Hub().KubeconfigPath(), prof: prof, workAddr: workAddr}
	if err := b.setUp(ctx); err != nil {
		return nil, err
	}
	defer func() { b.proc.stop() }()
	fns := map[string]func(context.Context, *report) error{
		"bulk": b.bulk, "bulk_one": b.bulkOne, "update": b.update, "drift": b.drift, "pull": b.pull, "steady": b.steady, "restart": b.restart,
		"outage": b.outage, "move": b.move, "failover": b.failover, "rollout": b.rollout, "dashboard": b.dashboard, "instance_ready": b.instanceReady, "deployments": b.deployments,
		"takeover": b.takeover,
	}
	for _, name := range steps {
		fmt.Printf("scenario %s...\n", name)
		if name != "steady" && name != "outage" && name != "restart" && name != "move" && name != "failover" && name != "takeover" {
			b.prof.cpu(name, 20)
		}
		err := fns[name](ctx, r)
		b.prof.wait()
		if name == "bulk" {
			b.prof.heap("bulk")
		}
		if err != nil {
			// The figures so far go back with the error: main prints them.
			return r, fmt.Errorf("scenario %s: %w\nflotilla hub log (tail):\n%s%s", name, err, tail(b.proc.log.String(), 20), agentLogTail(b.agentLog))
		}
	}
	return r, nil
}

// fleetPlanes are the planes of a benchmark fleet: the hub and the spokes, every API server
// with an audit log, and the pull scenario's spoke when it runs.
func fleetPlanes(spokes int, profileDir string, pull bool) []localfleet.PlaneSpec {
	planes := []localfleet.PlaneSpec{{Name: "hub", Role: localfleet.RoleHub, AuditLog: true}}
	for i := range spokes {
		spoke := localfleet.PlaneSpec{Name: fmt.Sprintf("spoke-%d", i+1), Role: localfleet.RoleSpoke, AuditLog: true}
		if profileDir != "" {
			spoke.ExtraAPIServerArgs = []string{"--profiling=true"} // for the spoke CPU profiles
		}
		planes = append(planes, spoke)
	}
	if pull {
		// The pull scenario's spoke, reached only by its agent: no other scenario sees it.
		planes = append(planes, localfleet.PlaneSpec{Name: pullPlane, Role: localfleet.RoleSpoke, AuditLog: true})
	}
	return planes
}

// startFleet starts the planes in dir, four at a time.
func startFleet(ctx context.Context, dir, binDir string, planes []localfleet.PlaneSpec) (*localfleet.Fleet, error) {
	spokes := 0
	for _, p := range planes {
		if p.Role == localfleet.RoleSpoke && p.Name != pullPlane {
			spokes++
		}
	}
	fmt.Printf("starting a hub and %d API-only spokes...\n", spokes)
	return localfleet.Start(ctx, localfleet.Options{Dir: dir, BinDir: binDir, Planes: planes, Parallel: 4, Progress: os.Stdout})
}

// hubArgs are the flags `flotilla hub` runs with: profiles, and the work endpoint when the pull
// scenario runs.
func (b *bench) hubArgs() []string {
	args := b.prof.hubArgs()
	if b.workAddr != "" {
		args = append(args, "--work-bind-address="+b.workAddr)
	}
	return args
}

// pushSpokes are the fleet's spokes the hub delivers to: every spoke but the pull scenario's.
func (b *bench) pushSpokes() []*localfleet.Plane {
	var spokes []*localfleet.Plane
	for _, s := range b.fleet.Spokes() {
		if s.Name() != pullPlane {
			spokes = append(spokes, s)
		}
	}
	return spokes
}

// measuredPlanes are the hub and the push spokes.
func (b *bench) measuredPlanes() []*localfleet.Plane {
	return append([]*localfleet.Plane{b.fleet.Hub()}, b.pushSpokes()...)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// setUp installs Flotilla, starts `flotilla hub`, joins the spokes and creates the objects.
func (b *bench) setUp(ctx context.Context) error {
	hubCfg := b.fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		return err
	}
	var err error
	if b.hub, err = client.New(hubCfg, client.Options{Scheme: install.Scheme()}); err != nil {
		return err
	}
	if b.proc, err = startHub(b.binDir, b.hubKC, b.hubArgs()...); err != nil {
		return err
	}
	for _, s := range b.pushSpokes() {
		if err := membership.Join(ctx, b.hub, membership.JoinOptions{Name: s.Name(), Spoke: s.RESTConfig()}); err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(s.RESTConfig()) // the direct client: no client-side rate limit
		if err != nil {
			return err
		}
		b.spokes = append(b.spokes, cs)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: baseNS}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: ns}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
	} {
		if err := b.hub.Create(ctx, obj); err != nil {
			return err
		}
	}
	hubCS, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return err
	}
	fmt.Printf("creating %d ConfigMaps on the hub...\n", b.p.Objects)
	return applyAll(ctx, hubCS, ns, b.p, "v0")
}

// configMap is object i of the benchmark with a payload version.
func configMap(i int, p params, version string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"bench": "yes"}},
		Data:       map[string]string{"payload": strings.Repeat("x", p.ObjectSize), "version": version},
	}
}

// applyAll server-side applies the benchmark's objects to one API server, perSpoke at a time.
func applyAll(ctx context.Context, cs kubernetes.Interface, namespace string, p params, version string) error {
	return applyRange(ctx, cs, namespace, p, version, p.Objects)
}

func applyRange(ctx context.Context, cs kubernetes.Interface, namespace string, p params, version string, n int) error {
	return forEachLimited(n, func(i int) error { return applyOne(ctx, cs, namespace, configMap(i, p, version)) })
}

// forEachLimited calls fn(0..n-1), perSpoke at a time, and returns one of the errors.
func forEachLimited(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, perSpoke)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

func applyOne(ctx context.Context, cs kubernetes.Interface, namespace string, cm *corev1.ConfigMap) error {
	data, err := jsonOf(cm)
	if err != nil {
		return err
	}
	force := true
	_, err = cs.CoreV1().ConfigMaps(namespace).Patch(ctx, cm.Name, "application/apply-patch+yaml", data,
		metav1.PatchOptions{FieldManager: "bench-baseline", Force: &force})
	return err
}

func hasVersion(v string) func(*corev1.ConfigMap) bool {
	return func(cm *corev1.ConfigMap) bool { return cm.Data["version"] == v }
}

// percentile returns the p-th percentile of durations, in milliseconds.
func percentile(d []time.Duration, p float64) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := int(float64(len(s)-1) * p)
	return float64(s[idx].Microseconds()) / 1000
}
