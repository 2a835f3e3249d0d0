package plan

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// TestForClusterTakesTheDeliveryDecision plans objects in the situations where a plan that
// decided on its own would promise something a delivery does not do. Each object's decision
// is decide.Decide's; this checks that the plan shows it.
func TestForClusterTakesTheDeliveryDecision(t *testing.T) {
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	rival := render.Owner{Kind: "Propagation", Namespace: "team", Name: "api"}
	marked := func(o render.Owner, hash string, extra map[string]string) metav1.ObjectMeta {
		l := map[string]string{flotillav1.LabelOwner: o.LabelValue()}
		for k, v := range extra {
			l[k] = v
		}
		return metav1.ObjectMeta{Labels: l, Annotations: map[string]string{flotillav1.AnnotationOwner: o.String(), flotillav1.AnnotationHash: hash}}
	}
	live := func(name, value string, m metav1.ObjectMeta) *corev1.ConfigMap {
		m.Namespace, m.Name = "team", name
		return &corev1.ConfigMap{ObjectMeta: m, Data: map[string]string{"v": value}}
	}
	elsewhere := func(c *corev1.ConfigMap) *corev1.ConfigMap {
		c.Namespace = "elsewhere"
		return c
	}
	desired := func(kind, ns, name, value string) *unstructured.Unstructured {
		m := marked(owner, "h2", nil)
		u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"v": value}}}
		u.SetAPIVersion("v1")
		if kind == "ClusterRole" {
			u.SetAPIVersion("rbac.authorization.k8s.io/v1")
			delete(u.Object, "data")
		}
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(m.Labels)
		u.SetAnnotations(m.Annotations)
		return u
	}
	cm := func(name, value string) *unstructured.Unstructured { return desired("ConfigMap", "team", name, value) }
	cases := []struct {
		name     string
		strategy decide.Strategy
		live     []client.Object
		desired  []*unstructured.Unstructured
		want     []Item // Action and Object; Reason when it must contain something
	}{
		{"adopted under ApplyOnce: written once", decide.Strategy{PruneBudget: 50, Conflict: flotillav1.ConflictAdopt, Mode: flotillav1.ModeApplyOnce},
			[]client.Object{live("a", "old", metav1.ObjectMeta{})}, []*unstructured.Unstructured{cm("a", "new")},
			[]Item{{Action: Update, Object: "configmap team/a"}}},
		{"the owner's under ApplyOnce: not updated", decide.Strategy{PruneBudget: 50, Mode: flotillav1.ModeApplyOnce},
			[]client.Object{live("a", "old", marked(owner, "h1", nil))}, []*unstructured.Unstructured{cm("a", "new")},
			[]Item{{Action: Unchanged, Object: "configmap team/a", Reason: "ApplyOnce"}}},
		{"held by another owner, even when adopting", decide.Strategy{PruneBudget: 50, Conflict: flotillav1.ConflictAdopt},
			[]client.Object{live("a", "old", marked(rival, "h1", nil))}, []*unstructured.Unstructured{cm("a", "new")},
			[]Item{{Action: Blocked, Object: "configmap team/a", Reason: rival.String()}}},
		{"unmanaged, not adopted", decide.Strategy{PruneBudget: 50},
			[]client.Object{live("a", "old", metav1.ObjectMeta{})}, []*unstructured.Unstructured{cm("a", "new")},
			[]Item{{Action: Blocked, Object: "configmap team/a", Reason: "Adopt"}}},
		{"outside the tenant's namespace, and cluster-scoped", decide.Strategy{PruneBudget: 50}, nil,
			[]*unstructured.Unstructured{desired("ConfigMap", "kube-system", "a", "v"), desired("ClusterRole", "", "r", "")},
			[]Item{{Action: Blocked, Object: "configmap kube-system/a", Reason: "own namespace"},
				{Action: Blocked, Object: "clusterrole.rbac.authorization.k8s.io/r", Reason: "cluster-scoped"}}},
		{"changed on the cluster, Report", decide.Strategy{PruneBudget: 50, Drift: flotillav1.DriftReport},
			[]client.Object{live("a", "edited", marked(owner, "h2", nil))}, []*unstructured.Unstructured{cm("a", "hub")},
			[]Item{{Action: Unchanged, Object: "configmap team/a", Reason: "left as is (drift Report)"}}},
		{"changed on the cluster, Correct", decide.Strategy{PruneBudget: 50},
			[]client.Object{live("a", "edited", marked(owner, "h2", nil))}, []*unstructured.Unstructured{cm("a", "hub")},
			[]Item{{Action: Update, Object: "configmap team/a"}}},
		{"leftovers within the budget: pruned; protected and another's kept", decide.Strategy{PruneBudget: 50},
			[]client.Object{live("a", "v", marked(owner, "h2", nil)), live("b", "v", marked(owner, "h1", nil)),
				live("kept", "v", marked(owner, "h1", map[string]string{flotillav1.LabelProtected: "true"})), live("theirs", "v", marked(rival, "h1", nil))},
			[]*unstructured.Unstructured{cm("a", "v")},
			[]Item{{Action: Unchanged, Object: "configmap team/a"}, {Action: Prune, Object: "configmap team/b"},
				{Action: Kept, Object: "configmap team/kept", Reason: flotillav1.LabelProtected}}},
		{"leftovers over the budget", decide.Strategy{PruneBudget: 50},
			[]client.Object{live("a", "v", marked(owner, "h2", nil)), live("b", "v", marked(owner, "h1", nil)), live("c", "v", marked(owner, "h1", nil))},
			[]*unstructured.Unstructured{cm("a", "v")},
			[]Item{{Action: Unchanged, Object: "configmap team/a"}, {Action: Blocked, Object: "configmap team/b", Reason: "prune budget"},
				{Action: Blocked, Object: "configmap team/c", Reason: "prune budget"}}},
		{"leftovers over the budget, decoys elsewhere and protected ones do not pad the count", decide.Strategy{PruneBudget: 50},
			[]client.Object{live("a", "v", marked(owner, "h2", nil)), live("b", "v", marked(owner, "h1", nil)), live("c", "v", marked(owner, "h1", nil)),
				elsewhere(live("d1", "v", marked(owner, "h1", map[string]string{flotillav1.LabelProtected: "true"}))),
				elsewhere(live("d2", "v", marked(owner, "h1", map[string]string{flotillav1.LabelProtected: "true"}))),
				elsewhere(live("d3", "v", marked(owner, "h1", map[string]string{flotillav1.LabelProtected: "true"}))),
				live("p1", "v", marked(owner, "h1", map[string]string{flotillav1.LabelProtected: "true"})),
				live("p2", "v", marked(owner, "h1", map[string]string{flotillav1.LabelProtected: "true"}))},
			[]*unstructured.Unstructured{cm("a", "v")},
			[]Item{{Action: Unchanged, Object: "configmap team/a"}, {Action: Blocked, Object: "configmap team/b", Reason: "prune budget"},
				{Action: Blocked, Object: "configmap team/c", Reason: "prune budget"},
				{Action: Kept, Object: "configmap team/p1"}, {Action: Kept, Object: "configmap team/p2"}}},
		{"leftovers, Orphan", decide.Strategy{PruneBudget: 50, Deletion: flotillav1.DeletionOrphan},
			[]client.Object{live("b", "v", marked(owner, "h1", nil))}, nil,
			[]Item{{Action: Kept, Object: "configmap team/b", Reason: "Orphan"}}},
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), apimeta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, apimeta.RESTScopeRoot)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The fake cannot dry-run a server-side apply: answer with the object sent, as a
			// spoke whose defaults change nothing would.
			spoke := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithRESTMapper(mapper).WithObjects(c.live...).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
					return nil
				}}).Build()
			d := &Desired{Owner: owner, Strategy: c.strategy, Prune: true, Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}}
			// The owner's record lists everything of its on the cluster: delivered before.
			delivered := map[string]bool{}
			for _, o := range c.live {
				delivered["/ConfigMap/"+o.GetNamespace()+"/"+o.GetName()] = true
			}
			got := ForCluster(context.Background(), spoke, d, ClusterDesired{Cluster: "eu-1", Objects: c.desired, Revision: "r2", Delivered: delivered})
			if got.Err != nil {
				t.Fatal(got.Err)
			}
			if len(got.Items) != len(c.want) {
				t.Fatalf("items %+v, want %+v", got.Items, c.want)
			}
			for i, want := range c.want {
				it := got.Items[i]
				if it.Action != want.Action || it.Object != want.Object || !strings.Contains(it.Reason, want.Reason) {
					t.Errorf("item %d = %+v, want %s %s (reason with %q)", i, it, want.Action, want.Object, want.Reason)
				}
			}
		})
	}
}
