package percluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Each case runs against every owner kind that delivers objects: a Propagation (several
// objects, divides only when its Placement says so) and a transparent-mode object (one
// workload, divided by default).
type kind struct {
	name  string
	input func(t *testing.T, replicas int64, pl *flotillav1.Placement, chosen ...string) Input
}

var kinds = []kind{
	{"Propagation", func(t *testing.T, replicas int64, pl *flotillav1.Placement, chosen ...string) Input {
		owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
		if pl.Spec.Replicas == nil {
			pl.Spec.Replicas = &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted}
		}
		return input(t, owner, false, pl, chosen, deployment(replicas), configMap())
	}},
	{"transparent Deployment", func(t *testing.T, replicas int64, pl *flotillav1.Placement, chosen ...string) Input {
		owner := render.Owner{Kind: "Deployment.apps", Namespace: "team", Name: "web"}
		return input(t, owner, true, pl, chosen, deployment(replicas))
	}},
}

func input(t *testing.T, owner render.Owner, byDefault bool, pl *flotillav1.Placement, chosen []string, objs ...*unstructured.Unstructured) Input {
	t.Helper()
	rendered := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		r, err := render.Render(o, owner)
		if err != nil {
			t.Fatal(err)
		}
		rendered[i] = r
	}
	render.Sort(rendered)
	facts := map[string]override.Cluster{}
	for _, c := range chosen {
		facts[c] = override.Cluster{Name: c, Labels: map[string]string{"name": c}}
	}
	digest := render.Revision(rendered)
	return Input{Owner: owner, Placement: pl, Chosen: chosen, DivideByDefault: byDefault, Facts: facts,
		Latest: Revision{Name: "web-" + digest, Digest: digest, Objects: rendered}, LatestName: "web-" + digest}
}

func deployment(replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": replicas,
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:1"}}}}}}}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("team")
	u.SetName("web")
	return u
}

func configMap() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"color": "blue"}}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("team")
	u.SetName("web")
	return u
}

const web = "apps/Deployment/team/web"

func placement() *flotillav1.Placement {
	return &flotillav1.Placement{}
}

// replicasOn returns the replicas of the web Deployment among a cluster's objects.
func replicasOn(t *testing.T, w Want) int64 {
	t.Helper()
	for _, o := range w.Objects {
		if render.Key(o) == web {
			n, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
			return n
		}
	}
	t.Fatalf("no Deployment among %d objects", len(w.Objects))
	return 0
}

func TestDivisionForEveryKind(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			in := k.input(t, 6, placement(), "a", "b", "c")
			out := Compute(in)
			var sum int64
			for _, c := range in.Chosen {
				w, ok := out.Want[c]
				if !ok {
					t.Fatalf("%s gets nothing: %+v", c, out)
				}
				n := replicasOn(t, w)
				sum += n
				if len(w.Replicas) != 1 || w.Replicas[0].Object != web || int64(w.Replicas[0].Replicas) != n {
					t.Errorf("%s: record keeps %+v, want the share %d it runs", c, w.Replicas, n)
				}
				if w.Revision == in.Latest.Digest || w.Base == nil || w.Base.Name != in.Latest.Name {
					t.Errorf("%s: revision %s made from %+v, want its own revision made from the latest", c, w.Revision, w.Base)
				}
			}
			if sum != 6 || out.Shares[web]["a"] != 2 {
				t.Errorf("replicas %d in all, shares %v; want 6 divided 2/2/2", sum, out.Shares)
			}
		})
	}
}

func TestMoveMakesBeforeItBreaksForEveryKind(t *testing.T) {
	for _, k := range kinds {
		for _, breakFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/breakFirst=%t", k.name, breakFirst), func(t *testing.T) {
				pl := placement()
				if breakFirst {
					pl.Spec.Moves = &flotillav1.MovePolicy{Order: flotillav1.MoveBreakBeforeMake}
				}
				// a ran all 4; b joins: 2/2 is the goal.
				in := k.input(t, 4, pl, "a", "b")
				in.Have = division.Replicas{web: {"a": 4}}
				ready := map[string]bool{}
				in.ReadyAt = func(c, _ string) bool { return ready[c] }
				out := Compute(in)
				a, b := replicasOn(t, out.Want["a"]), replicasOn(t, out.Want["b"])
				switch {
				case !breakFirst && (a != 4 || b != 2):
					t.Errorf("make first, b not Ready: a %d, b %d; want a kept at 4 and b at 2", a, b)
				case breakFirst && (a != 2 || b != 0):
					t.Errorf("break first, a not Ready: a %d, b %d; want a at 2 and b held at 0", a, b)
				}
				if out.Stalled == "" {
					t.Errorf("a held move says nothing stalled")
				}
				ready["a"], ready["b"] = true, true
				out = Compute(in)
				if a, b := replicasOn(t, out.Want["a"]), replicasOn(t, out.Want["b"]); a != 2 || b != 2 || out.Stalled != "" {
					t.Errorf("every cluster Ready: a %d, b %d, stalled %q; want 2/2 and nothing held", a, b, out.Stalled)
				}
				in.ReadyAt = nil // a plan: where the division ends
				if out := Compute(in); replicasOn(t, out.Want["a"]) != 2 || out.Stalled != "" {
					t.Errorf("a plan holds a move: %+v", out)
				}
			})
		}
	}
}

func TestPinsForEveryKind(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			in := k.input(t, 2, placement(), "a", "b", "c")
			old := k.input(t, 9, placement(), "a")
			in.Pins = []flotillav1.RevisionPin{{Cluster: "a", Revision: "web-old"}, {Cluster: "b", Revision: "web-gone"},
				{Cluster: "c", Revision: in.LatestName}}
			in.Pinned = map[string]Pinned{
				"web-old":  {Revision: Revision{Name: "web-old", Digest: old.Latest.Digest, Objects: old.Latest.Objects}},
				"web-gone": {Err: errors.New("revision web-gone is not kept")},
			}
			out := Compute(in)
			a := out.Want["a"]
			if a.Pinned != "web-old" || a.Base.Name != "web-old" || a.Base.Digest != old.Latest.Digest {
				t.Errorf("a pinned to web-old runs %+v", a)
			}
			if got := out.Failed["b"]; !strings.Contains(got, "web-gone is not kept") {
				t.Errorf("b pinned to a revision not kept: failure %q", got)
			}
			if _, ok := out.Want["b"]; ok {
				t.Errorf("b whose pinned revision is gone gets objects; it must keep what it has")
			}
			if c := out.Want["c"]; c.Pinned != "" || c.Base.Name != in.Latest.Name {
				t.Errorf("c pinned to the latest runs %+v, want the latest", c)
			}
		})
	}
}

func TestOverrideFailsOneClusterForEveryKind(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			in := k.input(t, 2, &flotillav1.Placement{Spec: flotillav1.PlacementSpec{Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeDuplicate}}}, "a", "b")
			in.Rules = override.Compile([]flotillav1.Override{
				{Name: "broken", ClusterNames: []string{"b"}, JSONPatch: []flotillav1.JSONPatchOperation{{Op: "replace", Path: "/spec/missing/field"}}},
				{Name: "image", ClusterNames: []string{"a"}, Target: &flotillav1.OverrideTarget{Kind: "Deployment"},
					JSONPatch: []flotillav1.JSONPatchOperation{{Op: "replace", Path: "/spec/replicas", Value: jsonValue(t, "5")}}},
			})
			out := Compute(in)
			if _, ok := out.Want["b"]; ok || !strings.Contains(out.Failed["b"], "broken") {
				t.Errorf("b's rule fails: want b failed naming the rule, got want %v failure %q", ok, out.Failed["b"])
			}
			a, ok := out.Want["a"]
			if !ok || replicasOn(t, a) != 5 || a.Revision == in.Latest.Digest {
				t.Errorf("a's rule: want 5 replicas at a revision of its own, got %+v", a)
			}
			if got := out.Clusters(in.Chosen); !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("Clusters = %v, want a and b (b keeps what it has)", got)
			}
		})
	}
}

func jsonValue(t *testing.T, raw string) *apiextensionsv1.JSON {
	t.Helper()
	return &apiextensionsv1.JSON{Raw: []byte(raw)}
}

func hpa() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
		"minReplicas":    int64(2), "maxReplicas": int64(10)}}}
	u.SetAPIVersion("autoscaling/v2")
	u.SetKind("HorizontalPodAutoscaler")
	u.SetNamespace("team")
	u.SetName("web")
	return u
}

// A transparent-mode HPA follows the shares of the workload it scales (Given): it goes only
// where the workload has a share, with its share of the bounds; elsewhere it is withheld.
func TestAnHPAFollowsItsWorkload(t *testing.T) {
	owner := render.Owner{Kind: "HorizontalPodAutoscaler.autoscaling", Namespace: "team", Name: "web"}
	in := input(t, owner, true, placement(), []string{"a", "b", "c"}, hpa())
	in.Given = division.NewPass(in.Latest.Objects, division.Replicas{web: {"a": 3, "b": 1}})
	out := Compute(in)
	if _, ok := out.Want["c"]; ok || out.Failed["c"] != "" {
		t.Errorf("c runs none of the workload: its HPA must be withheld, got %+v", out)
	}
	if got := out.Clusters(in.Chosen); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Clusters = %v, want a and b", got)
	}
	for _, c := range []string{"a", "b"} {
		w := out.Want[c]
		if max, _, _ := unstructured.NestedInt64(w.Objects[0].Object, "spec", "maxReplicas"); max >= 10 || len(w.Replicas) != 0 {
			t.Errorf("%s: maxReplicas %d (want its share of 10), record shares %+v (want none: the HPA is no workload)", c, max, w.Replicas)
		}
	}
}

// The invariants, for every kind: every chosen cluster either gets objects or fails (none is
// forgotten); a cluster whose pinned revision is gone keeps what it has; with every cluster
// Ready or not, the division's shares add up to the total; with none Ready, a move (the total
// did not shrink) never takes a replica from a cluster that runs it.
func FuzzCompute(f *testing.F) {
	f.Add(uint8(7), uint8(3), uint8(0b101), uint8(1), uint16(0x1234))
	f.Add(uint8(0), uint8(1), uint8(0), uint8(0), uint16(0))
	f.Add(uint8(40), uint8(5), uint8(0b11111), uint8(4), uint16(0xffff))
	f.Fuzz(func(t *testing.T, total, clusters, ready, pinned uint8, have uint16) {
		n := int(clusters%6) + 1
		chosen := make([]string, n)
		for i := range chosen {
			chosen[i] = fmt.Sprintf("c%d", i)
		}
		for _, k := range kinds {
			in := k.input(t, int64(total%50), placement(), chosen...)
			in.Have = division.Replicas{web: {}}
			for i, c := range chosen {
				if v := int64(have>>(2*i)) & 3; v > 0 {
					in.Have[web][c] = v
				}
			}
			gone := chosen[int(pinned)%n]
			in.Pins = []flotillav1.RevisionPin{{Cluster: gone, Revision: "web-gone"}}
			in.Pinned = map[string]Pinned{"web-gone": {Err: errors.New("not kept")}}
			in.ReadyAt = func(c, _ string) bool { return ready&(1<<(int(c[1]-'0'))) != 0 }
			out := Compute(in)
			if _, ok := out.Want[gone]; ok || out.Failed[gone] == "" {
				t.Fatalf("%s: %s pinned to a revision not kept: want it failed, got %+v", k.name, gone, out)
			}
			for _, c := range chosen {
				_, wanted := out.Want[c]
				_, failed := out.Failed[c]
				if wanted == failed {
					t.Fatalf("%s: %s wanted %t failed %t; want exactly one", k.name, c, wanted, failed)
				}
			}
			var shares int64
			for _, c := range chosen {
				shares += out.Shares[web][c]
			}
			if shares != int64(total%50) {
				t.Fatalf("%s: shares %v add up to %d, want %d", k.name, out.Shares, shares, total%50)
			}
			var running int64
			for _, v := range in.Have[web] {
				running += v
			}
			if ready != 0 || running > int64(total%50) {
				continue // a cluster is Ready, or the total shrank: not a move
			}
			for c, w := range out.Want {
				if now := in.Have[web][c]; replicasOn(t, w) < now {
					t.Fatalf("%s: nothing Ready, yet %s goes from %d to %d replicas", k.name, c, now, replicasOn(t, w))
				}
			}
		}
	})
}
