package drift

import (
	"encoding/json"
	"testing"
)

// deploymentJSON is a Deployment as Flotilla applies it, with the fields a spoke adds to what it
// stores.
const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
"labels":{"app":"web","tier":"frontend","flotilla.dev/owner":"p1"},"annotations":{"flotilla.dev/owner":"Propagation/shop/web","flotilla.dev/hash":"abc"}},
"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"frontend"}},
"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],
"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}}}}`

func decoded(b *testing.B, extra map[string]any) map[string]any {
	b.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(deploymentJSON), &m); err != nil {
		b.Fatal(err)
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// BenchmarkCompareDeployment is the drift check of one event: a stored copy against what was
// applied, with nothing drifted.
func BenchmarkCompareDeployment(b *testing.B) {
	desired := decoded(b, nil)
	live := decoded(b, map[string]any{"status": map[string]any{"replicas": int64(3), "readyReplicas": int64(3)}})
	b.ReportAllocs()
	for b.Loop() {
		if paths := Compare(desired, live, nil); len(paths) != 0 {
			b.Fatalf("drift %v", paths)
		}
	}
}

// BenchmarkDiffDeployment is the display diff of a copy changed in one field.
func BenchmarkDiffDeployment(b *testing.B) {
	before := decoded(b, nil)
	after := decoded(b, map[string]any{"spec": map[string]any{"replicas": int64(5)}})
	b.ReportAllocs()
	for b.Loop() {
		if len(Diff(before, after)) == 0 {
			b.Fatal("no change")
		}
	}
}
