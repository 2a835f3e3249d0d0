package decide

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestOverBudget(t *testing.T) {
	cases := []struct {
		name         string
		budget       int
		confirmed    string
		token        string // the owner's revision that confirms every cluster's
		stale, owned int
		want         bool
	}{
		{"within the budget", 50, "", "", 2, 10, false},
		{"exactly the budget", 50, "", "", 5, 10, false},
		{"over the budget", 50, "", "", 6, 10, true},
		{"all of them, whatever the budget", 100, "", "", 10, 10, true},
		{"the only one, whatever the budget", 100, "", "", 1, 1, true},
		{"budget 0: even one deletion waits", 0, "", "", 1, 10, true},
		{"budget 0, confirmed", 0, "r2", "", 1, 10, false},
		{"over, confirmed for this revision", 50, "r2", "", 10, 10, false},
		{"over, confirmed for an earlier revision", 50, "r1", "", 10, 10, true},
		{"a removal the caller decided", Unbudgeted, "", "", 10, 10, false},
		{"nothing to delete", 0, "", "", 0, 0, false},
		{"confirmed by the owner's revision", 50, "o1", "o1", 10, 10, false},
		{"the cluster's own revision no longer confirms once the owner's is named", 50, "r2", "o1", 10, 10, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Strategy{PruneBudget: c.budget, PruneConfirmed: c.confirmed, ConfirmToken: c.token}
			if got := OverBudget(s, "r2", c.stale, c.owned); got != c.want {
				t.Errorf("OverBudget = %v, want %v", got, c.want)
			}
		})
	}
}

func TestKept(t *testing.T) {
	protected := func(value string) map[string]string {
		return map[string]string{flotillav1.LabelOwner: tenant.LabelValue(), flotillav1.LabelProtected: value}
	}
	cases := []struct {
		name     string
		labels   map[string]string
		deletion flotillav1.DeletionPolicy
		kept     bool
	}{
		{"deleted by default", map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, "", false},
		{"deleted under Delete", map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, flotillav1.DeletionDelete, false},
		{"protected", protected("true"), "", true},
		{"protected only by the value true", protected("yes"), "", false},
		{"orphaned", map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, flotillav1.DeletionOrphan, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why := Kept(object(c.labels, nil), Strategy{Deletion: c.deletion})
			if (why != "") != c.kept {
				t.Errorf("Kept = %q, want kept=%v", why, c.kept)
			}
		})
	}
}

func TestLeftovers(t *testing.T) {
	// tenant's object named name in namespace ns, with extra labels.
	mark := func(ns, name string, extra ...string) *unstructured.Unstructured {
		o := object(map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, map[string]string{flotillav1.AnnotationOwner: tenant.String()})
		o.SetNamespace(ns)
		o.SetName(name)
		labels := o.GetLabels()
		for i := 0; i+1 < len(extra); i += 2 {
			labels[extra[i]] = extra[i+1]
		}
		o.SetLabels(labels)
		return o
	}
	real := []*unstructured.Unstructured{mark("team", "a"), mark("team", "b"), mark("team", "c"), mark("team", "d")}
	decoys := []*unstructured.Unstructured{mark("elsewhere", "d1"), mark("elsewhere", "d2"), mark("elsewhere", "d3", flotillav1.LabelProtected, "true"),
		mark("team", "p1", flotillav1.LabelProtected, "true"), mark("team", "p2", flotillav1.LabelProtected, "true")}
	unknownHere := []*unstructured.Unstructured{mark("team", "u1"), mark("team", "u2"), mark("team", "u3")}
	otherOwner := object(map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, map[string]string{flotillav1.AnnotationOwner: "Propagation/team/other"})
	list := func(objs ...*unstructured.Unstructured) []*unstructured.Unstructured { return objs }
	set := func(keys ...*unstructured.Unstructured) func(string) bool {
		m := map[string]bool{}
		for _, o := range keys {
			m[render.Key(o)] = true
		}
		return func(k string) bool { return m[k] }
	}
	all := func(groups ...[]*unstructured.Unstructured) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	cases := []struct {
		name         string
		owner        render.Owner
		found        []*unstructured.Unstructured
		wanted       []*unstructured.Unstructured
		known        func(string) bool
		stale, owned int
		over         bool // at the default budget
	}{
		{"one of four goes", tenant, real, list(real[:3]...), set(real...), 1, 4, false},
		{"all four go", tenant, real, list(), set(real...), 4, 4, true},
		{"all four go, decoys elsewhere and protected ones do not pad the count", tenant, all(real, decoys), list(), set(real...), 4, 4, true},
		{"objects in the owner's namespace it is not known to have count as deletions only", tenant, all(real, unknownHere), list(real[:2]...), set(real...), 5, 4, true},
		{"nothing known (a restart): only what is wanted counts as kept", tenant, real, list(real[:3]...), nil, 1, 3, false},
		{"another owner's object under an equal label", tenant, all(real, []*unstructured.Unstructured{otherOwner}), list(real...), set(real...), 0, 4, false},
		{"a wanted object the listing does not show yet counts", tenant, real[:3], list(real[3]), set(real[:3]...), 3, 4, true},
		{"a wanted protected object does not count", tenant, all(real, decoys), list(real[3], decoys[3]), set(real...), 3, 4, true},
		{"a cluster-scoped owner's scope is the cluster, its count what it knows", render.Owner{Kind: "ClusterPropagation", Name: "web"}, nil, list(), set(), 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stale, owned := Leftovers(c.found, c.wanted, c.owner, Strategy{PruneBudget: 50}, c.known)
			if len(stale) != c.stale || owned != c.owned {
				t.Errorf("Leftovers = %d stale of %d owned, want %d of %d", len(stale), owned, c.stale, c.owned)
			}
			for _, o := range stale {
				if o.GetNamespace() != "team" || o.GetLabels()[flotillav1.LabelProtected] == "true" {
					t.Errorf("would delete %s/%s", o.GetNamespace(), o.GetName())
				}
			}
			if got := OverBudget(Strategy{PruneBudget: 50}, "r", len(stale), owned); got != c.over {
				t.Errorf("OverBudget = %v, want %v", got, c.over)
			}
		})
	}
}

func TestInScope(t *testing.T) {
	o := object(nil, nil)
	if !InScope(o, tenant, Strategy{}) {
		t.Error("an object in the owner's namespace is out of its scope")
	}
	o.SetNamespace("elsewhere")
	if InScope(o, tenant, Strategy{}) {
		t.Error("an object in another namespace is in a namespaced owner's scope")
	}
	if !InScope(o, render.Owner{Kind: "ClusterPropagation", Name: "web"}, Strategy{}) {
		t.Error("an object in any namespace is out of a cluster-scoped owner's scope")
	}
	o.SetNamespace("")
	if InScope(o, tenant, Strategy{}) {
		t.Error("a cluster-scoped object is in a namespaced owner's scope")
	}
	instance := render.Owner{Kind: "WebApp.kro.run", Namespace: "team", Name: "web", Cluster: "spoke-1"}
	if InScope(o, instance, Strategy{}) {
		t.Error("a cluster-scoped object is in a confined instance's scope")
	}
	if !InScope(o, instance, Strategy{ClusterWide: true}) {
		t.Error("a cluster-scoped object is out of the scope of an instance that reaches its whole cluster")
	}
	if InScope(o, tenant, Strategy{ClusterWide: true}) {
		t.Error("ClusterWide widened the scope of an owner on the hub")
	}
}

func TestConfirmCommand(t *testing.T) {
	cases := []struct {
		owner render.Owner
		want  string
	}{
		{tenant, "kubectl annotate --overwrite -n team propagation web flotilla.dev/confirm-prune=r1"},
		{admin, "kubectl annotate --overwrite clusterpropagation platform flotilla.dev/confirm-prune=r1"},
		{render.Owner{Kind: "Widget.example.dev", Namespace: "team", Name: "w", Cluster: "eu-1"},
			"kubectl annotate --overwrite -n team widget.example.dev w flotilla.dev/confirm-prune=r1 (on cluster eu-1)"},
	}
	if got, want := ConfirmCommand(render.Owner{Kind: "ResourceGraphDefinition.kro.run", Name: "apps"}, Strategy{ConfirmOn: "apipropagation serving"}, "removed"),
		"kubectl annotate --overwrite apipropagation serving flotilla.dev/confirm-prune=removed"; got != want {
		t.Errorf("ConfirmCommand on another object = %q, want %q", got, want)
	}
	for _, c := range cases {
		if got := ConfirmCommand(c.owner, Strategy{}, "r1"); got != c.want {
			t.Errorf("ConfirmCommand(%s) = %q, want %q", c.owner, got, c.want)
		}
	}
}
