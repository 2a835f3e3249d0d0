package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// memoryFleet is a hub and one API-only spoke (audited), Flotilla's CRDs installed, a team
// namespace with a Placement choosing the spoke, and the hub controller running in this process
// (so that its heap is this process's).
type memoryFleet struct {
	fleet      *localfleet.Fleet
	hub, spoke client.Client
	stop       func()
}

func startMemoryFleet(t *testing.T, tune func(*Options)) *memoryFleet {
	t.Helper()
	spokeSpec := fleettest.APIOnlySpoke("spoke-a")
	spokeSpec.AuditLog = true
	fleet := fleettest.Start(t, fleettest.Hub(), spokeSpec)
	ctx := context.Background()
	hubCfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		t.Fatal(err)
	}
	hub, err := client.New(hubCfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	spokeCfg := fleet.Plane("spoke-a").RESTConfig()
	spoke, err := client.New(spokeCfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	m := &memoryFleet{fleet: fleet, hub: hub, spoke: spoke}
	m.stop = runController(t, hubCfg, tune)
	if err := membership.Join(ctx, hub, membership.JoinOptions{Name: "spoke-a", Spoke: spokeCfg, Labels: map[string]string{"region": "eu"}}); err != nil {
		t.Fatal(err)
	}
	eu := flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "eu"}, Spec: eu},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: "eu"}, Spec: eu},
	} {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// runController runs the hub controller in this process until the returned stop (or the
// test's end).
func runController(t *testing.T, hubCfg *rest.Config, tune func(*Options)) func() {
	t.Helper()
	opts := Options{MetricsAddr: "0", HealthAddr: "0", Inventory: inventory.Options{ProbeInterval: 500 * time.Millisecond}}
	if tune != nil {
		tune(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, hubCfg, opts) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub controller: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// spokeConfigMap waits until the spoke holds a ConfigMap whose data key k is v, and returns it.
func (m *memoryFleet) spokeConfigMap(t *testing.T, ns, name, k, v string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("ConfigMap %s/%s delivered with %s=%s", ns, name, k, v), func() error {
		if err := m.spoke.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			return err
		}
		if cm.Data[k] != v {
			return fmt.Errorf("%s=%q", k, cm.Data[k])
		}
		return nil
	})
	return cm
}

// gauge reads a metric of this process for a cluster (-1 when absent).
func gauge(t *testing.T, name, cluster string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					if m.GetGauge() != nil {
						return m.GetGauge().GetValue()
					}
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

// liveHeap is the heap still reachable after a collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// hubConfigMap creates or updates a hub ConfigMap.
func (m *memoryFleet) hubConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := m.hub.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		cm.Data = data
		if err := m.hub.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		return
	}
	cm.Data = data
	if err := m.hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// TestSpokeUserCannotGrowHubMemory plays the spoke user of finding 7: holding `edit` in one
// spoke namespace, they create about 100 MB of ConfigMaps there carrying Flotilla's owner
// label, some with random values and some with the value of a real owner copied from a
// delivered object. The spoke cache keeps those as stubs: the hub controller's live heap grows
// by less than 10 MB once the cache has seen them all (it grew by their size when the cache
// kept every labelled object whole). The real owner's object still converges, its drift is
// still corrected, a restart stubs none of the delivered objects, the metrics say what the
// cache holds, and the spoke's audit log shows Flotilla wrote nothing in the user's namespace.
func TestSpokeUserCannotGrowHubMemory(t *testing.T) {
	m := startMemoryFleet(t, nil)
	ctx := context.Background()
	m.hubConfigMap(t, "team", "web-config", map[string]string{"greeting": "hello"})
	if err := m.hub.Create(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}, Spec: flotillav1.PropagationSpec{
		PlacementRef:      flotillav1.PlacementRef{Name: "eu"},
		ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "web-config"}}}}); err != nil {
		t.Fatal(err)
	}
	delivered := m.spokeConfigMap(t, "team", "web-config", "greeting", "hello")
	realOwner := delivered.Labels[flotillav1.LabelOwner]
	if realOwner == "" {
		t.Fatal("the delivered ConfigMap has no owner label")
	}

	// The spoke user and their namespace.
	if err := m.spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "playground"}}); err != nil {
		t.Fatal(err)
	}
	fleettest.Grant(t, ctx, m.spoke, "playground", fleettest.SpokeUser, "edit")
	attacker, err := client.New(fleettest.As(m.fleet.Plane("spoke-a").RESTConfig(), fleettest.SpokeUser), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	const count, size = 200, 500 << 10 // 100 MiB
	payload := strings.Repeat("x", size)
	before := liveHeap()
	for i := range count {
		value := realOwner
		if i%2 == 0 {
			var b [10]byte
			_, _ = rand.Read(b[:])
			value = "o-" + hex.EncodeToString(b[:])
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "playground", Name: fmt.Sprintf("heavy-%03d", i),
			Labels: map[string]string{flotillav1.LabelOwner: value}}, Data: map[string]string{"payload": payload}}
		if err := attacker.Create(ctx, cm); err != nil {
			t.Fatalf("the spoke user creates ConfigMap %d: %v", i, err)
		}
	}
	fleettest.Eventually(t, 60*time.Second, "the spoke cache has seen every labelled ConfigMap", func() error {
		stubs, objects := gauge(t, "flotilla_spoke_cache_stubs", "spoke-a"), gauge(t, "flotilla_spoke_cache_objects", "spoke-a")
		if stubs+objects < count+1 {
			return fmt.Errorf("%v stubs, %v objects kept whole", stubs, objects)
		}
		return nil
	})
	after := liveHeap()
	grew := int64(after) - int64(before)
	t.Logf("live heap: %d MiB before, %d MiB after %d MiB of labelled ConfigMaps (%+.1f MiB)", before>>20, after>>20, count*size>>20, float64(grew)/(1<<20))
	if grew > 10<<20 {
		t.Errorf("the hub's live heap grew by %.1f MiB (limit 10 MiB)", float64(grew)/(1<<20))
	}
	if stubs, objects := gauge(t, "flotilla_spoke_cache_stubs", "spoke-a"), gauge(t, "flotilla_spoke_cache_objects", "spoke-a"); stubs != count || objects != 1 {
		t.Errorf("the spoke cache keeps %v stubs and %v objects whole, want %d stubs and the delivered object whole", stubs, objects, count)
	}
	if bytes := gauge(t, "flotilla_spoke_cache_bytes", "spoke-a"); bytes <= 0 || bytes > 1<<20 {
		t.Errorf("flotilla_spoke_cache_bytes = %v, want the delivered object's size only", bytes)
	}

	// Delivery and drift correction still work.
	m.hubConfigMap(t, "team", "web-config", map[string]string{"greeting": "bonjour"})
	live := m.spokeConfigMap(t, "team", "web-config", "greeting", "bonjour")
	live.Data["greeting"] = "drifted"
	if err := m.spoke.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	m.spokeConfigMap(t, "team", "web-config", "greeting", "bonjour")

	// After a restart the registry is complete before the spoke cache fills: only the user's
	// objects are stubs.
	m.stop()
	runController(t, m.fleet.Hub().RESTConfig(), nil)
	fleettest.Eventually(t, 60*time.Second, "the restarted controller's spoke cache has filled", func() error {
		stubs, objects := gauge(t, "flotilla_spoke_cache_stubs", "spoke-a"), gauge(t, "flotilla_spoke_cache_objects", "spoke-a")
		if stubs != count || objects < 1 {
			return fmt.Errorf("%v stubs, %v objects kept whole", stubs, objects)
		}
		return nil
	})
	m.hubConfigMap(t, "team", "web-config", map[string]string{"greeting": "hallo"})
	m.spokeConfigMap(t, "team", "web-config", "greeting", "hallo")

	// Flotilla wrote nothing of the user's (and its writes are seen: those of its delivery).
	events, err := m.fleet.Plane("spoke-a").AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	delivering := 0
	for _, e := range events {
		if !e.Mutating() || !strings.HasPrefix(e.UserAgent, "flotilla") {
			continue
		}
		switch e.ObjectRef.Namespace {
		case "playground":
			t.Errorf("Flotilla wrote %s playground/%s (%s)", e.ObjectRef.Resource, e.ObjectRef.Name, e.Verb)
		case "team":
			delivering++
		}
	}
	if delivering == 0 {
		t.Error("the audit log shows no write of Flotilla's delivery: the check above sees nothing")
	}
}

// TestSpokeCacheBoundKeepsDeliveriesRight runs the controller with a spoke cache bound of
// 16 KiB and a Propagation delivering six ConfigMaps of 6 KiB: those past the bound are stubs,
// which the metrics and a log line say, and every one of them still converges to a hub change,
// has its drift on the spoke corrected, and is not written again once it holds what the hub
// says (a stub is read from the spoke, never taken for the object).
func TestSpokeCacheBoundKeepsDeliveriesRight(t *testing.T) {
	m := startMemoryFleet(t, func(o *Options) { o.Inventory.CacheBytesPerCluster = 16 << 10 })
	ctx := context.Background()
	const n = 6
	payload := strings.Repeat("p", 6<<10)
	var selectors []flotillav1.ResourceSelector
	for i := range n {
		name := fmt.Sprintf("config-%d", i)
		m.hubConfigMap(t, "team", name, map[string]string{"v": "1", "payload": payload})
		selectors = append(selectors, flotillav1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: name})
	}
	if err := m.hub.Create(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "configs"}, Spec: flotillav1.PropagationSpec{
		PlacementRef: flotillav1.PlacementRef{Name: "eu"}, ResourceSelectors: selectors}}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m.spokeConfigMap(t, "team", fmt.Sprintf("config-%d", i), "v", "1")
	}
	fleettest.Eventually(t, 30*time.Second, "the spoke cache is at its bound", func() error {
		if full, stubs := gauge(t, "flotilla_spoke_cache_full", "spoke-a"), gauge(t, "flotilla_spoke_cache_stubs", "spoke-a"); full != 1 || stubs < 1 {
			return fmt.Errorf("flotilla_spoke_cache_full %v, %v stubs", full, stubs)
		}
		return nil
	})
	if !strings.Contains(logs.String(), "Spoke cache is at its bound") {
		t.Error("no log line says the spoke cache is at its bound")
	}

	for i := range n {
		m.hubConfigMap(t, "team", fmt.Sprintf("config-%d", i), map[string]string{"v": "2", "payload": payload})
	}
	for i := range n {
		m.spokeConfigMap(t, "team", fmt.Sprintf("config-%d", i), "v", "2")
	}
	for i := range n {
		live := &corev1.ConfigMap{}
		if err := m.spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: fmt.Sprintf("config-%d", i)}, live); err != nil {
			t.Fatal(err)
		}
		live.Data["v"] = "drifted"
		if err := m.spoke.Update(ctx, live); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		m.spokeConfigMap(t, "team", fmt.Sprintf("config-%d", i), "v", "2")
	}

	// Converged: Flotilla writes nothing more to the spoke.
	writes := func() int {
		events, err := m.fleet.Plane("spoke-a").AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for _, e := range events {
			if e.Mutating() && strings.HasPrefix(e.UserAgent, "flotilla") && e.ObjectRef.Resource == "configmaps" {
				count++
			}
		}
		return count
	}
	settled := writes()
	fleettest.Consistently(t, 5*time.Second, "no further writes once converged", func() error {
		if w := writes(); w != settled {
			return fmt.Errorf("%d more writes of ConfigMaps", w-settled)
		}
		return nil
	})
	if reads := gauge(t, "flotilla_spoke_cache_stub_reads_total", "spoke-a"); reads < 1 {
		t.Errorf("flotilla_spoke_cache_stub_reads_total = %v: no stub was read from the spoke", reads)
	}
}
