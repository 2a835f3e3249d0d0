package owners

import (
	"testing"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestKeeps(t *testing.T) {
	r := New()
	prop := render.Owner{Kind: "Propagation", Namespace: "team-a", Name: "web"}
	cp := render.Owner{Kind: "ClusterPropagation", Name: "base"}
	inst := render.Owner{Kind: "Widget.example.dev", Namespace: "team-b", Name: "w", Cluster: "eu-1"}
	wide := render.Owner{Kind: "Widget.example.dev", Namespace: "team-b", Name: "wide", Cluster: "eu-1"}
	r.Add(prop, false)
	r.Add(cp, false)
	r.Add(inst, false)
	r.Add(wide, true)
	for _, c := range []struct {
		name                      string
		cluster, value, namespace string
		want                      bool
	}{
		{"namespaced owner in its namespace", "eu-1", prop.LabelValue(), "team-a", true},
		{"namespaced owner's value in another namespace", "eu-1", prop.LabelValue(), "team-b", false},
		{"namespaced owner's value on a cluster-scoped object", "eu-1", prop.LabelValue(), "", false},
		{"cluster-scoped owner anywhere", "us-1", cp.LabelValue(), "team-z", true},
		{"instance on its cluster, in its namespace", "eu-1", inst.LabelValue(), "team-b", true},
		{"instance's value on another cluster", "us-1", inst.LabelValue(), "team-b", false},
		{"cluster-wide instance in another namespace", "eu-1", wide.LabelValue(), "kube-system", true},
		{"unknown value", "eu-1", "o-0123456789abcdef0123", "team-a", false},
		{"empty value", "eu-1", "", "team-a", false},
	} {
		if got := r.Keeps(c.cluster, c.value, c.namespace); got != c.want {
			t.Errorf("%s: Keeps = %v, want %v", c.name, got, c.want)
		}
	}
	r.Remove(prop)
	if r.Keeps("eu-1", prop.LabelValue(), "team-a") {
		t.Error("a removed owner is still known")
	}
}

func TestFeed(t *testing.T) {
	r := New()
	type obj struct {
		name     string
		labelled bool
	}
	h := r.Feed(false, func(o any) (render.Owner, bool) {
		x := o.(obj)
		return render.Owner{Kind: "Deployment.apps", Namespace: "team-a", Name: x.name}, x.labelled
	})
	owner := render.Owner{Kind: "Deployment.apps", Namespace: "team-a", Name: "web"}
	h.OnAdd(obj{"web", true}, true)
	if !r.Keeps("c", owner.LabelValue(), "team-a") {
		t.Fatal("an added owner is not known")
	}
	h.OnUpdate(obj{"web", true}, obj{"web", false})
	if r.Keeps("c", owner.LabelValue(), "team-a") {
		t.Fatal("an object that stopped being an owner is still known")
	}
	h.OnAdd(obj{"web", true}, false)
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "team-a/web", Obj: obj{"web", true}})
	if r.Len() != 0 {
		t.Fatalf("a deleted owner is still known (%d known)", r.Len())
	}
}
