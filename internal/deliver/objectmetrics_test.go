package deliver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// The objects gauge sums the latest results of a cluster's owners; a Deliverer whose context
// ended is read no more.
func TestClusterObjectsSumTheLatestResults(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1})
	const cluster = "objects-gauge"
	web := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	db := render.Owner{Kind: "Propagation", Namespace: "team", Name: "db"}
	for _, o := range []render.Owner{web, db} {
		d.Submit(Job{Owner: o, Cluster: cluster, Revision: "1"})
	}
	fleettest.Eventually(t, 10*time.Second, "both deliveries done", func() error {
		for _, o := range []render.Owner{web, db} {
			if _, ok := d.Result(o, cluster); !ok {
				return errors.New("no result yet")
			}
		}
		return nil
	})
	w, _ := d.existingWorker(cluster)
	w.mu.Lock()
	w.results[web] = Result{Applied: 3, Ready: 2, Failed: 1, Drifted: 1}
	w.results[db] = Result{Applied: 2, Ready: 2, Fighting: 1}
	w.mu.Unlock()
	expected := map[string]int{"applied": 5, "ready": 4, "failed": 1, "drifted": 1, "fighting": 1}
	text, err := testutil.CollectAndFormat(objectsCollector{}, expfmt.TypeTextPlain, "flotilla_cluster_objects", "flotilla_cluster_owners")
	if err != nil {
		t.Fatal(err)
	}
	for state, v := range expected {
		line := `flotilla_cluster_objects{cluster="` + cluster + `",state="` + state + `"} ` + strconv.Itoa(v)
		if !strings.Contains(string(text), line) {
			t.Errorf("missing %q in:\n%s", line, text)
		}
	}
	if line := `flotilla_cluster_owners{cluster="` + cluster + `"} 2`; !strings.Contains(string(text), line) {
		t.Errorf("missing %q in:\n%s", line, text)
	}

	cancel()
	fleettest.Eventually(t, 10*time.Second, "a stopped Deliverer no longer counted", func() error {
		text, err := testutil.CollectAndFormat(objectsCollector{}, expfmt.TypeTextPlain, "flotilla_cluster_objects")
		if err != nil {
			return err
		}
		if strings.Contains(string(text), cluster) {
			return errors.New("still counted")
		}
		return nil
	})
}

func TestDriftClockTimesACorrectionOnce(t *testing.T) {
	var c driftClock
	web := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	t0 := time.Unix(1000, 0)
	if _, ok := c.reverted(web, "k", t0); ok {
		t.Fatal("a correction of a drift no watch showed was timed")
	}
	c.detected(web, "k", t0)
	c.detected(web, "k", t0.Add(time.Second)) // the first sighting counts
	if took, ok := c.reverted(web, "k", t0.Add(3*time.Second)); !ok || took != 3*time.Second {
		t.Fatalf("reverted after %v (%v), want 3s", took, ok)
	}
	if _, ok := c.reverted(web, "k", t0.Add(4*time.Second)); ok {
		t.Fatal("one drift timed twice")
	}
	c.detected(web, "k", t0)
	c.forget(web)
	if _, ok := c.reverted(web, "k", t0.Add(time.Second)); ok {
		t.Fatal("a forgotten drift was timed")
	}
}
