package kro

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// items is a spec list of n strings: the heavy graph's expressions cost n² with it.
func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("item-%d", i)
	}
	return out
}

func heavyGraph(t *testing.T, cfg Config) *Compiled {
	t.Helper()
	c, err := Compile(readRGD(t, "testdata/heavy-rgd.yaml"), spokeSnapshot(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readyMessage is the message of the status condition ResourcesReady.
func readyMessage(plan *Plan) string {
	conditions, _ := plan.Status["conditions"].([]any)
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "ResourcesReady" {
			return fmt.Sprint(m["message"])
		}
	}
	return ""
}

// An instance whose input makes an expression cost more than the limit fails at once with ERROR,
// naming the expression and the limit, wherever the expression is (a child's template or a
// status field), and applies nothing; the same graph with a small input is expanded.
func TestCELCostLimit(t *testing.T) {
	c := heavyGraph(t, DefaultConfig())
	for _, where := range []string{"template", "status"} {
		t.Run(where, func(t *testing.T) {
			start := time.Now()
			plan, err := Evaluate(context.Background(), c, newInstance(t, c, "heavy", map[string]any{"items": items(2000), "where": where}), Objects{})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(plan.Err, ErrCELLimit) || !StoppedByCost(plan.Err) || plan.State != StateError || len(plan.Children) != 0 || plan.Prune {
				t.Fatalf("err %v, state %s, %d children, prune %v", plan.Err, plan.State, len(plan.Children), plan.Prune)
			}
			msg := readyMessage(plan)
			if !strings.Contains(msg, "CEL cost limit of 1000000 exceeded") || !strings.Contains(msg, "schema.spec.items.map(a, schema.spec.items.map(b, a + b))") {
				t.Errorf("ResourcesReady message %q", msg)
			}
			if _, leaked := plan.Status["pairs"]; where == "status" && leaked {
				t.Errorf("status.pairs computed: %v", plan.Status["pairs"])
			}
			t.Logf("stopped after %v", took)

			small, err := Evaluate(context.Background(), c, newInstance(t, c, "small", map[string]any{"items": items(3), "where": where}), Objects{})
			if err != nil || small.Err != nil || len(small.Children) != 1 {
				t.Fatalf("small input: err %v, plan err %v, %d children", err, small.Err, len(small.Children))
			}
		})
	}
}

// The evaluation's context interrupts a running expression: with no cost limit to speak of, an
// expression that would run for seconds stops soon after the deadline, saying why.
func TestCELInterruptedByContext(t *testing.T) {
	c := heavyGraph(t, Config{MaxCollectionSize: DefaultMaxCollectionSize, MaxCollectionDimensionSize: DefaultMaxCollectionDimensionSize,
		CELCostLimit: 1 << 62, CELCostBudget: 1 << 62})
	const deadline = 200 * time.Millisecond
	ctx, cancel := context.WithTimeoutCause(context.Background(), deadline, errors.New("the reconcile's deadline passed"))
	defer cancel()
	start := time.Now()
	plan, err := Evaluate(ctx, c, newInstance(t, c, "heavy", map[string]any{"items": items(5000)}), Objects{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(plan.Err, ErrCELLimit) || StoppedByCost(plan.Err) || plan.State != StateError {
		t.Fatalf("err %v (stopped by its cost: %v), state %s", plan.Err, StoppedByCost(plan.Err), plan.State)
	}
	if msg := readyMessage(plan); !strings.Contains(msg, "CEL evaluation stopped: the reconcile's deadline passed") {
		t.Errorf("ResourcesReady message %q", msg)
	}
	if took > deadline+time.Second {
		t.Errorf("stopped %v after the start, for a deadline of %v", took, deadline)
	}
	t.Logf("stopped after %v", took)
}

// The budget bounds what all the expressions of one evaluation cost together, each under the
// limit.
func TestCELCostBudget(t *testing.T) {
	c := heavyGraph(t, Config{MaxCollectionSize: DefaultMaxCollectionSize, MaxCollectionDimensionSize: DefaultMaxCollectionDimensionSize,
		CELCostLimit: DefaultCELCostLimit, CELCostBudget: 1000})
	plan, err := Evaluate(context.Background(), c, newInstance(t, c, "some", map[string]any{"items": items(30)}), Objects{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(plan.Err, ErrCELLimit) || !StoppedByCost(plan.Err) || plan.State != StateError {
		t.Fatalf("err %v, state %s", plan.Err, plan.State)
	}
	if msg := readyMessage(plan); !strings.Contains(msg, "CEL cost budget of 1000 for one evaluation of the instance spent") {
		t.Errorf("ResourcesReady message %q", msg)
	}
}

// BenchmarkEvaluateChain is one pass over the chain graph with its external reference present:
// what the limits add to an ordinary evaluation (the copy of the graph, cost tracking).
func BenchmarkEvaluateChain(b *testing.B) {
	c := chainGraph(b)
	instance := newInstance(b, c, "shop", map[string]any{"name": "shop", "colors": []any{"red", "blue"}})
	world := Objects{settings()}
	for b.Loop() {
		if _, err := Evaluate(context.Background(), c, instance, world); err != nil {
			b.Fatal(err)
		}
	}
}
