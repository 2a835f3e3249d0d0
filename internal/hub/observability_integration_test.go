package hub_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// documentedSeries is a row of the series table of docs/operations.md.
type documentedSeries struct {
	typ    dto.MetricType
	labels []string
}

var seriesRow = regexp.MustCompile("^\\| `(flotilla_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\| ([^|]*) \\|")

// documented reads the series table of docs/operations.md.
func documented(t *testing.T) map[string]documentedSeries {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]dto.MetricType{"counter": dto.MetricType_COUNTER, "gauge": dto.MetricType_GAUGE, "histogram": dto.MetricType_HISTOGRAM}
	docs := map[string]documentedSeries{}
	for _, line := range strings.Split(string(data), "\n") {
		m := seriesRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var labels []string
		for _, l := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[3], -1) {
			labels = append(labels, l[1])
		}
		slices.Sort(labels)
		docs[m[1]] = documentedSeries{typ: types[m[2]], labels: labels}
	}
	if len(docs) == 0 {
		t.Fatal("docs/operations.md documents no series")
	}
	return docs
}

// scrape reads the hub's metrics, as Prometheus would.
func scrape(ctx context.Context, addr string) (map[string]*dto.MetricFamily, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	return families, string(body), err
}

// value is the sum of the series of a family whose labels include want; a histogram's is its
// sample count.
func value(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	sum := 0.0
	f := families[name]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		match := true
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// sane checks what holds of every series of a documented family: its labels are the
// documented ones, its values finite, a counter's never negative, a histogram's buckets
// cumulative up to its count.
func sane(name string, doc documentedSeries, f *dto.MetricFamily) error {
	if f.GetType() != doc.typ {
		return fmt.Errorf("%s is a %s, documented as a %s", name, f.GetType(), doc.typ)
	}
	for _, m := range f.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName())
		}
		slices.Sort(labels)
		if !slices.Equal(labels, doc.labels) {
			return fmt.Errorf("%s has labels %v, documented %v", name, labels, doc.labels)
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			if v := m.GetCounter().GetValue(); v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s%v = %v", name, m.GetLabel(), v)
			}
		case dto.MetricType_GAUGE:
			if v := m.GetGauge().GetValue(); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s%v = %v", name, m.GetLabel(), v)
			}
		case dto.MetricType_HISTOGRAM:
			h := m.GetHistogram()
			if s := h.GetSampleSum(); s < 0 || math.IsNaN(s) {
				return fmt.Errorf("%s%v: sum %v", name, m.GetLabel(), s)
			}
			prev := uint64(0)
			for _, b := range h.GetBucket() {
				if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
					return fmt.Errorf("%s%v: bucket le=%v holds %d after %d, of %d", name, m.GetLabel(), b.GetUpperBound(), b.GetCumulativeCount(), prev, h.GetSampleCount())
				}
				prev = b.GetCumulativeCount()
			}
		}
	}
	return nil
}

// TestMetricsAfterADeliveryAndADrift runs the hub controller with a spoke, delivers a
// ConfigMap and a Secret with a Propagation, drifts the ConfigMap on the spoke, and scrapes the
// hub: every series docs/operations.md documents is there with its documented type and labels
// and sane values; the delivery, the drift and its correction show in the series that measure
// them; no flotilla_ series is undocumented; and no object name, namespace or Secret byte
// appears in the metrics.
func TestMetricsAfterADeliveryAndADrift(t *testing.T) {
	const (
		cluster   = "observed"
		namespace = "obs-team"
		owner     = "obs-owner"
		object    = "obs-settings"
		labelled  = "obs-labelled"
		secret    = "obs-credentials"
		canary    = "obs-canary-5f0c2a91"
	)
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke(cluster))
	ctx := context.Background()
	hubClient := hubtest.Install(t, fleet)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	hubtest.Run(t, fleet, func(o *hub.Options) { o.MetricsAddr, o.MetricsPlainHTTP = addr, true })

	docs := documented(t)
	// What earlier tests of this process left in the registry does not count: histograms
	// without a cluster label are compared with this first scrape.
	var before map[string]*dto.MetricFamily
	fleettest.Eventually(t, 30*time.Second, "a first scrape", func() (err error) {
		before, _, err = scrape(ctx, addr)
		return err
	})

	spoke := fleet.Plane(cluster).RESTConfig()
	if err := membership.Join(ctx, hubClient, membership.JoinOptions{Name: cluster, Spoke: spoke}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: namespace},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: object, Namespace: namespace}, Data: map[string]string{"v": "hub"}},
		// A transparent-mode object: its own owner, counted in flotilla_owners too.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: labelled, Namespace: namespace, Labels: map[string]string{flotillav1.LabelPlacement: "all"}},
			Data: map[string]string{"v": "hub"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: namespace}, StringData: map[string]string{"token": canary}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: owner, Namespace: namespace},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"}, ResourceSelectors: []flotillav1.ResourceSelector{
				{APIVersion: "v1", Kind: "ConfigMap", Name: object}, {APIVersion: "v1", Kind: "Secret", Name: secret}}}},
	} {
		if err := hubClient.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
	fleettest.Eventually(t, 60*time.Second, "the Propagation Applied on the spoke", func() error {
		p := &flotillav1.Propagation{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: owner}, p); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(p.Status.Conditions, flotillav1.PropagationApplied) || p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("conditions %v", p.Status.Conditions)
		}
		return nil
	})

	// kubectl wait reads the conditions Flotilla's objects carry for it (package statusconds).
	for _, target := range []string{"propagation/" + owner, "placement/all"} {
		wctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		out, err := exec.CommandContext(wctx, fleettest.KubectlPath(t), "--kubeconfig", fleet.Hub().KubeconfigPath(), "-n", namespace,
			"wait", "--for=condition=Ready", "--timeout=30s", target).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("kubectl wait --for=condition=Ready %s: %v\n%s", target, err, out)
		}
	}

	// A drift: someone changes the ConfigMap on the spoke; Flotilla puts it back.
	spokeClient, err := client.New(spoke, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := spokeClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: object}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "edited"
	if err := spokeClient.Update(ctx, cm, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 60*time.Second, "the drift reverted", func() error {
		if err := spokeClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: object}, cm); err != nil {
			return err
		}
		if cm.Data["v"] != "hub" {
			return fmt.Errorf("still %q", cm.Data["v"])
		}
		return nil
	})

	on := map[string]string{"cluster": cluster}
	increased := func(after map[string]*dto.MetricFamily, name string, labels map[string]string) bool {
		return value(after, name, labels) > value(before, name, labels)
	}
	fleettest.Eventually(t, 60*time.Second, "every documented series, with what the delivery and the drift did", func() error {
		families, body, err := scrape(ctx, addr)
		if err != nil {
			return err
		}
		var problems []string
		for name, doc := range docs {
			f, ok := families[name]
			if !ok || len(f.GetMetric()) == 0 {
				problems = append(problems, name+" missing")
				continue
			}
			if err := sane(name, doc, f); err != nil {
				t.Fatal(err) // wrong now is wrong for good: no retry
			}
		}
		for name := range families {
			if _, ok := docs[name]; strings.HasPrefix(name, "flotilla_") && !ok {
				t.Fatalf("%s is exported but not documented in docs/operations.md", name)
			}
		}
		for _, c := range []struct {
			what string
			ok   bool
		}{
			{"the cluster counted Ready", value(families, "flotilla_clusters", map[string]string{"state": "ready"}) >= 1},
			{"the cluster Ready", value(families, "flotilla_cluster_ready", on) == 1},
			{"the cluster engaged", value(families, "flotilla_cluster_engaged", on) == 1},
			{"a probe counted", value(families, "flotilla_cluster_probes_total", on) >= 1},
			{"a probe within the last minute", float64(time.Now().Unix())-value(families, "flotilla_cluster_last_probe_timestamp_seconds", on) < 60},
			{"credentials valid for at most a day", value(families, "flotilla_cluster_credential_expiry_seconds", on) > 0 &&
				value(families, "flotilla_cluster_credential_expiry_seconds", on) <= 24*3600},
			{"three objects applied and ready on the cluster", value(families, "flotilla_cluster_objects", map[string]string{"cluster": cluster, "state": "applied"}) == 3 &&
				value(families, "flotilla_cluster_objects", map[string]string{"cluster": cluster, "state": "ready"}) == 3},
			{"no object failed on the cluster", value(families, "flotilla_cluster_objects", map[string]string{"cluster": cluster, "state": "failed"}) == 0},
			{"two owners deliver to the cluster", value(families, "flotilla_cluster_owners", on) == 2},
			{"the Propagation counted Applied", value(families, "flotilla_owners", map[string]string{"kind": "Propagation", "condition": "Applied", "status": "True"}) >= 1},
			{"the labelled ConfigMap counted Applied, not PruneBlocked", value(families, "flotilla_owners", map[string]string{"kind": "ConfigMap", "condition": "Applied", "status": "True"}) == 1 &&
				value(families, "flotilla_owners", map[string]string{"kind": "ConfigMap", "condition": "PruneBlocked", "status": "False"}) == 1},
			{"a complete delivery", value(families, "flotilla_deliveries_total", map[string]string{"cluster": cluster, "result": "complete"}) >= 1},
			{"applies written", value(families, "flotilla_spoke_writes_total", map[string]string{"cluster": cluster, "write": "apply", "outcome": "ok"}) >= 2},
			{"writes timed", value(families, "flotilla_spoke_write_duration_seconds", on) >= 2},
			{"a drift seen", value(families, "flotilla_drift_events_total", on) >= 1},
			{"the change timed until applied", increased(families, "flotilla_change_applied_duration_seconds", map[string]string{"kind": "Propagation"})},
			{"the drift timed until reverted", increased(families, "flotilla_drift_revert_duration_seconds", nil)},
		} {
			if !c.ok {
				problems = append(problems, c.what)
			}
		}
		for _, leak := range []string{namespace, owner, object, labelled, secret, canary} {
			if strings.Contains(body, leak) {
				t.Fatalf("the metrics name %q", leak)
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s", strings.Join(problems, "; "))
		}
		return nil
	})
}
