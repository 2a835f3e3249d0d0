package instances_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// pairsExpression is the heavy API's expression, as its instances' errors quote it.
const pairsExpression = "schema.spec.items.all(a, schema.spec.items.all(b, size(a) <= size(b) + 100))"

// heavyEnv serves the heavy API on spoke-1, compiled with cfg, and with the default limits on
// spoke-2, with a team namespace on both; the instance controller has two workers per spoke and
// a reconcile deadline.
func heavyEnv(t *testing.T, cfg kro.Config, deadline time.Duration) (e *env, heavy, limited *kro.Compiled) {
	t.Helper()
	e = startEnvWith(t, instances.Options{Workers: 2, ReconcileTimeout: deadline}, "spoke-1", "spoke-2")
	rgd := readRGD(t, "testdata/heavy-rgd.yaml")
	heavy = e.compileWith(t, "spoke-1", rgd, cfg)
	e.installCRD(t, "spoke-1", heavy)
	e.graphs.Serve("spoke-1", instances.Graph{Compiled: heavy, Revision: heavy.SpecHash()})
	limited = e.serve(t, "spoke-2", rgd)
	for _, spoke := range []string{"spoke-1", "spoke-2"} {
		e.namespace(t, spoke, "team")
	}
	return e, heavy, limited
}

// failedBecause checks that an instance shows ERROR, naming the heavy expression and why.
func failedBecause(c client.Client, compiled *kro.Compiled, name, because string) error {
	u := newInstance(compiled, "team", name, nil)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	if err := stateIs(u, kro.StateError); err != nil {
		return err
	}
	if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, because) || !strings.Contains(msg, pairsExpression) {
		return fmt.Errorf("ResourcesReady message %q", msg)
	}
	return nil
}

// heavyInstances creates n instances of the heavy API as the spoke user on spoke-1, each with
// the given number of items (its square is how many comparisons), and waits until all show
// ERROR saying because.
func heavyInstances(t *testing.T, e *env, heavy *kro.Compiled, n, items int, because string) time.Duration {
	t.Helper()
	user := e.spokeUser(t, "spoke-1", "team", heavy)
	start := time.Now()
	for i := range n {
		if err := user.Create(context.Background(), newInstance(heavy, "team", fmt.Sprintf("heavy-%d", i), map[string]any{"items": spreadItems(items)})); err != nil {
			t.Fatal(err)
		}
	}
	fleettest.Eventually(t, wait, "the costly instances in ERROR", func() error {
		for i := range n {
			if err := failedBecause(user, heavy, fmt.Sprintf("heavy-%d", i), because); err != nil {
				return fmt.Errorf("heavy-%d: %w", i, err)
			}
		}
		return nil
	})
	took := time.Since(start)
	t.Logf("%d costly instances on spoke-1 ERROR %v after their creation", n, took)
	return took
}

// timeToActive creates a cheap instance named name on spoke-2 and returns how long it took to
// become ACTIVE, measured from its creation.
func timeToActive(t *testing.T, e *env, limited *kro.Compiled, name string) time.Duration {
	t.Helper()
	spoke2 := e.spokes["spoke-2"]
	cheap := newInstance(limited, "team", name, map[string]any{"items": []any{"a", "b"}})
	start := time.Now()
	if err := spoke2.Create(context.Background(), cheap); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, fmt.Sprintf("the cheap instance %s on spoke-2 ACTIVE", name), func() error {
		if err := spoke2.Get(context.Background(), client.ObjectKeyFromObject(cheap), cheap); err != nil {
			return err
		}
		return stateIs(cheap, kro.StateActive)
	})
	return time.Since(start)
}

// activeWithin fails the test unless a cheap instance on spoke-2, created while costly ones
// keep spoke-1's workers busy, becomes ACTIVE within 2 s, or, on a machine so busy that one
// took longer with no costly instance at all (calm), within four times that: the fleet's API
// servers share the machine's cores with the hub, and the issue is one spoke's instances
// waiting on another's, not the machine's speed. Waiting on spoke-1 took 11.5 s here.
func activeWithin(t *testing.T, e *env, limited *kro.Compiled, calm time.Duration) {
	t.Helper()
	limit := max(2*time.Second, 4*calm)
	took := timeToActive(t, e, limited, "cheap")
	t.Logf("the cheap instance on spoke-2 ACTIVE %v after its creation (%v with no costly instance)", took, calm)
	if took > limit {
		t.Errorf("the cheap instance on spoke-2 took %v to become ACTIVE, beside costly instances on spoke-1 (limit %v)", took, limit)
	}
}

// noHeavyChild fails the test if a costly instance's child was written on a spoke.
func noHeavyChild(t *testing.T, e *env, spokes ...string) {
	t.Helper()
	for _, spoke := range spokes {
		pairs := func(ev localfleet.AuditEvent) bool {
			return strings.HasPrefix(ev.ObjectRef.Name, "heavy") && ev.ObjectRef.Resource == "configmaps"
		}
		if w := e.writes(t, spoke, pairs); len(w) != 0 {
			t.Errorf("a costly instance's child written on %s: %s", spoke, describe(w))
		}
	}
}

// A spoke user's instances whose input makes the API's CEL pathological (the API served with
// the default limits and reconcile deadline) fail, each with ERROR naming the expression and
// the cost limit, not their deadline, and write nothing; they are not retried with backoff
// (the same input costs the same: spoke-1's queue counts no retry, where passes stopped by the
// deadline count some, TestCostlyInstancesStallNoOtherSpoke); an instance on another spoke
// becomes ACTIVE in under 2 s meanwhile. Without the limits each pass would compare 4·10⁶
// pairs and write its child.
//
// 2,000 items: before it stops an expression at its cost limit, cel-go's cost tracking takes
// time in proportion to the length of the list a comprehension walks (about 0.5 s here with
// 2,000 items, 2.2 s with 10,000), which a busy machine multiplies; the test keeps it well
// under the deadline, which would stop the pass first and say so.
func TestPathologicalInstanceStopsAtItsCostLimit(t *testing.T) {
	const deadline = 30 * time.Second // the default
	e, heavy, limited := heavyEnv(t, kro.DefaultConfig(), deadline)
	calm := timeToActive(t, e, limited, "calm")
	before := retries(t, "instances-spoke-1")
	heavyInstances(t, e, heavy, 4, 2000, "CEL cost limit of 1000000 exceeded")
	if n := retries(t, "instances-spoke-1") - before; n != 0 {
		t.Errorf("spoke-1's instances were retried %v times after passes stopped by their cost", n)
	}
	activeWithin(t, e, limited, calm)
	noHeavyChild(t, e, "spoke-1")
}

// retries is how many times the named workqueue queued an item again after a delay
// (controller-runtime's workqueue_retries_total), for all the tests of this binary.
func retries(t *testing.T, queue string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "workqueue_retries_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == queue {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// One spoke cannot stall the others even when each of its instances takes the whole reconcile
// deadline: served on spoke-1 with no cost limit to speak of, four costly instances, twice as
// many as a spoke has workers, are stopped by the deadline (ERROR, saying so) and keep spoke-1's
// workers busy with their retries, while a cheap instance on spoke-2, which has workers of its
// own, becomes ACTIVE in under 2 s.
func TestCostlyInstancesStallNoOtherSpoke(t *testing.T) {
	const deadline = 4 * time.Second
	lax := kro.DefaultConfig()
	lax.CELCostLimit, lax.CELCostBudget = 1<<62, 1<<62
	e, heavy, limited := heavyEnv(t, lax, deadline)
	calm := timeToActive(t, e, limited, "calm")
	before := retries(t, "instances-spoke-1")
	heavyInstances(t, e, heavy, 4, 10000, "CEL evaluation stopped: the instance's reconcile deadline of 4s passed")
	if retries(t, "instances-spoke-1") == before {
		t.Error("no pass stopped by the deadline was retried on spoke-1")
	}
	activeWithin(t, e, limited, calm)
	noHeavyChild(t, e, "spoke-1")
}

// spreadItems is a spec list of n short strings.
func spreadItems(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("i%d", i)
	}
	return out
}
