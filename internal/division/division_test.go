package division

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func ptr[T any](v T) *T { return &v }

func workload(kind, name string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": replicas}}}
	u.SetAPIVersion("apps/v1")
	u.SetKind(kind)
	u.SetNamespace("team")
	u.SetName(name)
	return u
}

var (
	web = render.Key(workload("Deployment", "web", 0))
	api = render.Key(workload("Deployment", "api", 0))
)

func weighted(entries ...flotillav1.ClusterReplicas) *flotillav1.ReplicaPolicy {
	return &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted, Clusters: entries}
}

func entry(name string, weight int32, clusters ...string) flotillav1.ClusterReplicas {
	return flotillav1.ClusterReplicas{Name: name, ClusterNames: clusters, Weight: ptr(weight)}
}

var three = map[string]map[string]string{"a": {"region": "eu"}, "b": {"region": "eu"}, "c": {"region": "us"}}

func TestDivide(t *testing.T) {
	tests := []struct {
		name     string
		policy   *flotillav1.ReplicaPolicy
		total    int64
		have     map[string]int64
		want     map[string]int64
		unplaced bool
	}{
		{"no policy: even", nil, 7, nil, nil, false},
		{"weights 1:2:3", weighted(entry("a", 1, "a"), entry("b", 2, "b"), entry("c", 3, "c")), 12, nil, map[string]int64{"a": 2, "b": 4, "c": 6}, false},
		{"weights 1:2:3, total raised: only the difference moves", weighted(entry("a", 1, "a"), entry("b", 2, "b"), entry("c", 3, "c")), 18,
			map[string]int64{"a": 2, "b": 4, "c": 6}, map[string]int64{"a": 3, "b": 6, "c": 9}, false},
		{"a selector entry, first match wins", weighted(entry("c", 4, "c"), flotillav1.ClusterReplicas{Name: "eu", Weight: ptr(int32(2)),
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}), 8, nil, map[string]int64{"a": 2, "b": 2, "c": 4}, false},
		{"min as a percentage, rounded down", weighted(flotillav1.ClusterReplicas{Name: "a", ClusterNames: []string{"a"}, Weight: ptr(int32(0)), Min: ptr(intstr.FromString("25%"))}),
			10, nil, map[string]int64{"a": 2, "b": 4, "c": 4}, false},
		{"max as a percentage, rounded up", weighted(flotillav1.ClusterReplicas{Name: "c", ClusterNames: []string{"c"}, Weight: ptr(int32(100)), Max: ptr(intstr.FromString("20%"))}),
			10, nil, map[string]int64{"a": 4, "b": 4, "c": 2}, false},
		{"every cluster at its maximum", weighted(flotillav1.ClusterReplicas{Name: "all", ClusterSelector: &metav1.LabelSelector{}, Max: ptr(intstr.FromInt32(2))}),
			10, nil, map[string]int64{"a": 2, "b": 2, "c": 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Policy: tt.policy, Chosen: three, Totals: map[string]int64{web: tt.total}, Seed: "Propagation/team/web"}
			if tt.have != nil {
				in.Have = Replicas{web: tt.have}
			}
			out := Divide(in)
			got := out.Shares[web]
			var sum int64
			for _, n := range got {
				sum += n
			}
			if tt.want == nil {
				// Even: 3, 2, 2 in some order.
				if sum != tt.total || len(got) != 3 {
					t.Fatalf("shares %v", got)
				}
				for _, n := range got {
					if n < 2 || n > 3 {
						t.Fatalf("shares %v are not even", got)
					}
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("shares %v, want %v", got, tt.want)
			}
			if msg, ok := out.Messages[web]; ok != tt.unplaced || (ok && !strings.Contains(msg, "4")) {
				t.Fatalf("message %q (unplaced %v, want %v)", msg, ok, tt.unplaced)
			}
		})
	}
}

func TestDivides(t *testing.T) {
	if Divides(nil, false) || !Divides(nil, true) {
		t.Fatal("defaults: Propagations duplicate, transparent mode divides")
	}
	if !Divides(weighted(), false) || Divides(&flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeDuplicate}, true) {
		t.Fatal("a policy decides for every owner kind")
	}
}

func TestWorkloads(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(3)}}}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("x")
	noReplicas := workload("StatefulSet", "db", 0)
	unstructured.RemoveNestedField(noReplicas.Object, "spec", "replicas")
	got := Workloads([]*unstructured.Unstructured{workload("Deployment", "web", 4), workload("ReplicaSet", "rs", 2), cm, noReplicas})
	want := map[string]int64{web: 4, render.Key(workload("ReplicaSet", "rs", 0)): 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Workloads = %v, want %v", got, want)
	}
}

func TestHold(t *testing.T) {
	readyWhen := func(ready map[string]bool, seen map[string]map[string]int64) func(string, Replicas) bool {
		return func(c string, held Replicas) bool {
			seen[c] = held.On(c)
			return ready[c]
		}
	}
	tests := []struct {
		name    string
		shares  Replicas
		have    Replicas
		ready   map[string]bool
		want    Replicas
		stalled string
	}{
		{"first delivery: nothing to hold", Replicas{web: {"a": 3, "b": 3}}, nil, nil, Replicas{web: {"a": 3, "b": 3}}, ""},
		{"moving to b, not Ready there: a keeps its replicas", Replicas{web: {"a": 0, "b": 6}}, Replicas{web: {"a": 6}}, map[string]bool{"a": true},
			Replicas{web: {"a": 6, "b": 6}}, "copies on b are Ready"},
		{"moving to b, Ready there: a gives them up", Replicas{web: {"a": 0, "b": 6}}, Replicas{web: {"a": 6, "b": 6}}, map[string]bool{"b": true},
			Replicas{web: {"a": 0, "b": 6}}, ""},
		{"growing only: nothing to hold, whatever is Ready", Replicas{web: {"a": 4, "b": 4}}, Replicas{web: {"a": 3, "b": 3}}, nil,
			Replicas{web: {"a": 4, "b": 4}}, ""},
		{"a scale-down with every other cluster Ready", Replicas{web: {"a": 3, "b": 3}}, Replicas{web: {"a": 4, "b": 3}}, map[string]bool{"b": true},
			Replicas{web: {"a": 3, "b": 3}}, ""},
		{"a scale-down while another cluster is not Ready: more replicas than asked, never fewer available", Replicas{web: {"a": 3, "b": 3}},
			Replicas{web: {"a": 4, "b": 3}}, nil, Replicas{web: {"a": 4, "b": 3}}, "copies on b are Ready"},
		{"a cluster that gained in an earlier pass is still waited for", Replicas{web: {"a": 0, "b": 6}}, Replicas{web: {"a": 6, "b": 6}}, map[string]bool{"a": true},
			Replicas{web: {"a": 6, "b": 6}}, "copies on b are Ready"},
		{"swapping two workloads, both Ready with their gains: both released",
			Replicas{web: {"a": 0, "b": 2}, api: {"a": 2, "b": 0}}, Replicas{web: {"a": 2, "b": 2}, api: {"a": 2, "b": 2}}, map[string]bool{"a": true, "b": true},
			Replicas{web: {"a": 0, "b": 2}, api: {"a": 2, "b": 0}}, ""},
		{"swapping, b not Ready yet: only what waits for b is held",
			Replicas{web: {"a": 0, "b": 2}, api: {"a": 2, "b": 0}}, Replicas{web: {"a": 2, "b": 2}, api: {"a": 2, "b": 2}}, map[string]bool{"a": true},
			Replicas{web: {"a": 2, "b": 2}, api: {"a": 2, "b": 0}}, "copies on b are Ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]map[string]int64{}
			var chosen []string
			for c := range tt.shares[web] {
				chosen = append(chosen, c)
			}
			slices.Sort(chosen)
			got, stalled := Hold(Move{Chosen: chosen, Shares: tt.shares, Have: tt.have, Ready: readyWhen(tt.ready, seen)})
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Hold = %v, want %v", got, tt.want)
			}
			if (tt.stalled == "") != (stalled == "") || !strings.Contains(stalled, tt.stalled) {
				t.Fatalf("stalled %q, want %q", stalled, tt.stalled)
			}
			// Readiness is judged with every reduction held.
			for w, byCluster := range tt.have {
				for c, n := range byCluster {
					if r, judged := seen[c]; judged && n > tt.shares[w][c] && r[w] != n {
						t.Fatalf("readiness of %s judged with %s at %d, want it held at %d", c, w, seen[c][w], n)
					}
				}
			}
		})
	}
}

func TestApply(t *testing.T) {
	d, err := render.Render(workload("Deployment", "web", 6), render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	objs := []*unstructured.Unstructured{d}
	out, err := NewPass(objs, Replicas{web: {"a": 2, "b": 4}}).Apply(objs, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(out[0].Object, "spec", "replicas"); n != 2 {
		t.Fatalf("spec.replicas %d, want 2", n)
	}
	if render.HashOf(out[0]) == render.HashOf(d) {
		t.Fatal("the hash did not change with the replicas")
	}
	if _, marked := out[0].GetAnnotations()[flotillav1.AnnotationShare]; marked {
		t.Fatal("a workload no HPA scales carries the share annotation")
	}
	if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); n != 6 {
		t.Fatal("Apply changed its input")
	}
}

func TestCapacityAndPacked(t *testing.T) {
	room := map[string]map[string]int64{
		"a": {"cpu": 4000, "memory": 64 << 30, "pods": 110},
		"b": {"cpu": 8000, "memory": 64 << 30, "pods": 110},
		"c": {"cpu": 12000, "memory": 64 << 30, "pods": 110},
	}
	one := map[string]map[string]int64{web: {"cpu": 1000, "memory": 1 << 30}}
	divide := func(mode flotillav1.ReplicaMode, total int64, have map[string]int64) map[string]int64 {
		in := Input{Policy: &flotillav1.ReplicaPolicy{Mode: mode}, Chosen: three, Room: room, Requests: one,
			Totals: map[string]int64{web: total}, Seed: "Propagation/team/web"}
		if have != nil {
			in.Have = Replicas{web: have}
		}
		return Divide(in).Shares[web]
	}
	if got := divide(flotillav1.ReplicaModeCapacity, 12, nil); !reflect.DeepEqual(got, map[string]int64{"a": 2, "b": 4, "c": 6}) {
		t.Errorf("Capacity 12 over room for 4, 8 and 12: %v, want 2, 4, 6", got)
	}
	if got := divide(flotillav1.ReplicaModePacked, 10, nil); !reflect.DeepEqual(got, map[string]int64{"a": 0, "b": 0, "c": 10}) {
		t.Errorf("Packed 10: %v, want all on c, the biggest", got)
	}
	if got := divide(flotillav1.ReplicaModePacked, 20, nil); !reflect.DeepEqual(got, map[string]int64{"a": 0, "b": 8, "c": 12}) {
		t.Errorf("Packed 20: %v, want c full (12), the rest on b", got)
	}
	// Weighted ignores room.
	if got := divide(flotillav1.ReplicaModeWeighted, 12, nil); !reflect.DeepEqual(got, map[string]int64{"a": 4, "b": 4, "c": 4}) {
		t.Errorf("Weighted 12: %v, want 4 each", got)
	}
	// A cluster given fewer Nodes (less room) gets fewer replicas at the next division.
	room["c"] = map[string]int64{"cpu": 2000, "memory": 64 << 30, "pods": 110}
	if got := divide(flotillav1.ReplicaModeCapacity, 14, nil); got["c"] >= got["a"] {
		t.Errorf("Capacity with c shrunk to room for 2: %v, want c below a", got)
	}
}

func TestRequests(t *testing.T) {
	d := workload("Deployment", "web", 3)
	_ = unstructured.SetNestedSlice(d.Object, []any{
		map[string]any{"name": "app", "resources": map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}}},
		map[string]any{"name": "sidecar", "resources": map[string]any{"requests": map[string]any{"cpu": int64(1), "memory": "128Mi"}}},
	}, "spec", "template", "spec", "containers")
	bare := workload("Deployment", "api", 2)
	got := Requests([]*unstructured.Unstructured{d, bare})
	want := map[string]map[string]int64{web: {"cpu": 1500, "memory": (1 << 30) + (128 << 20)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Requests = %v, want %v", got, want)
	}
	if n := room(map[string]int64{"cpu": 4000, "pods": 3}, want[web]); n != 2 {
		t.Fatalf("room for 1.5 cpu in 4 with 3 pods: %d, want 2", n)
	}
	if n := room(map[string]int64{"pods": 3}, nil); n != 3 {
		t.Fatalf("room without requests is the pods: %d, want 3", n)
	}
	if n := room(nil, want[web]); n >= 0 {
		t.Fatalf("room of a cluster not known: %d, want unknown", n)
	}
}

func TestHoldBreakingFirst(t *testing.T) {
	tests := []struct {
		name    string
		shares  Replicas
		have    Replicas
		ready   map[string]bool
		want    Replicas
		stalled string
	}{
		{"first delivery: nothing to hold", Replicas{web: {"a": 1, "b": 0}}, nil, nil, Replicas{web: {"a": 1, "b": 0}}, ""},
		{"moving to b: a goes to 0 first, b waits at 0", Replicas{web: {"a": 0, "b": 1}}, Replicas{web: {"a": 1}}, nil,
			Replicas{web: {"a": 0, "b": 0}}, "copies on a are Ready with fewer"},
		{"a Ready at 0: b gets its replica", Replicas{web: {"a": 0, "b": 1}}, Replicas{web: {"a": 1, "b": 0}}, map[string]bool{"a": true, "b": true},
			Replicas{web: {"a": 0, "b": 1}}, ""},
		{"a shrank in an earlier pass: still waited for until Ready at 0", Replicas{web: {"a": 0, "b": 1}}, Replicas{web: {"a": 0, "b": 0}},
			map[string]bool{"b": true}, Replicas{web: {"a": 0, "b": 0}}, "copies on a are Ready"},
		{"a cannot confirm (unreachable, failed over): b never runs a second copy", Replicas{web: {"a": 0, "b": 1}}, Replicas{web: {"a": 1, "b": 0}},
			map[string]bool{"b": true}, Replicas{web: {"a": 0, "b": 0}}, "copies on a are Ready"},
		{"shrinking only: nothing to hold", Replicas{web: {"a": 1, "b": 1}}, Replicas{web: {"a": 2, "b": 2}}, nil,
			Replicas{web: {"a": 1, "b": 1}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var judged []string
			got, stalled := Hold(Move{Chosen: []string{"a", "b"}, Shares: tt.shares, Have: tt.have, BreakFirst: true,
				Ready: func(c string, held Replicas) bool {
					judged = append(judged, c)
					if held[web]["b"] > tt.have[web]["b"] {
						t.Errorf("readiness judged with b's growth released: %v", held)
					}
					return tt.ready[c]
				}})
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Hold = %v, want %v", got, tt.want)
			}
			if (tt.stalled == "") != (stalled == "") || !strings.Contains(stalled, tt.stalled) {
				t.Fatalf("stalled %q, want %q", stalled, tt.stalled)
			}
		})
	}
}
