package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

func (e *env) condition(t *testing.T, name, condType string, want metav1.ConditionStatus, contains string) *flotillav1.Propagation {
	t.Helper()
	p := &flotillav1.Propagation{}
	fleettest.Eventually(t, wait, fmt.Sprintf("%s %s=%s containing %q", name, condType, want, contains), func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, p); err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, condType)
		if c == nil || c.Status != want || !strings.Contains(c.Message, contains) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	return p
}

func (e *env) countOnSpoke(t *testing.T, spoke string, labels client.ListOption) int {
	t.Helper()
	var cms corev1.ConfigMapList
	if err := e.spokes[spoke].List(context.Background(), &cms, client.InNamespace("team"), labels); err != nil {
		t.Fatal(err)
	}
	return len(cms.Items)
}

func TestOverrides(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us", "spoke-c": "ap"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	e.create(t, configMap("settings", nil, "hub"))
	e.create(t, deployment("web"))
	p := propagationOf("tuned", flotillav1.PropagationStrategy{}, "ConfigMap/settings", "Deployment/web")
	p.Spec.Overrides = []flotillav1.Override{
		{Name: "per-cluster-value", Target: &flotillav1.OverrideTarget{Kind: "ConfigMap"},
			CEL: &flotillav1.CELOverride{Path: "/data/v", Expression: `cluster.name + "@" + cluster.labels.region`}},
		{Name: "eu-image", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}, Target: &flotillav1.OverrideTarget{Kind: "Deployment"},
			JSONPatch: []flotillav1.JSONPatchOperation{{Op: "replace", Path: "/spec/template/spec/containers/0/image", Value: &apiextensionsv1.JSON{Raw: []byte(`"eu.example.com/nginx"`)}}}},
		{Name: "broken-cel", ClusterNames: []string{"spoke-b"}, CEL: &flotillav1.CELOverride{Path: "/data/v", Expression: `cluster.labels[`}},
		{Name: "invalid-replicas", ClusterNames: []string{"spoke-c"}, Target: &flotillav1.OverrideTarget{Kind: "Deployment"},
			MergePatch: &apiextensionsv1.JSON{Raw: []byte(`{"spec":{"replicas":"many"}}`)}},
	}
	e.create(t, p)

	e.onSpoke(t, "spoke-a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}}, false, func() error {
		if v, _ := e.valueOnSpoke("spoke-a", "settings"); v != "spoke-a@eu" {
			return fmt.Errorf("value %q", v)
		}
		return nil
	})
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	e.onSpoke(t, "spoke-a", d, false, func() error {
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "eu.example.com/nginx" || d.Annotations[flotillav1.AnnotationOverrides] != "eu-image" {
			return fmt.Errorf("image %s, annotations %v", img, d.Annotations)
		}
		return nil
	})
	got := e.condition(t, "tuned", flotillav1.PropagationApplied, metav1.ConditionFalse, "")
	fleettest.Eventually(t, wait, "per-cluster override errors naming the rule", func() error {
		if err := e.hub.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
			return err
		}
		msgs := map[string]string{}
		for _, r := range got.Status.ClusterResults {
			msgs[r.Cluster] = r.Message
		}
		if !strings.Contains(msgs["spoke-b"], `override "broken-cel": cel.expression does not compile`) {
			return fmt.Errorf("spoke-b: %q", msgs["spoke-b"])
		}
		if !strings.Contains(msgs["spoke-c"], "override rules invalid-replicas") {
			return fmt.Errorf("spoke-c: %q", msgs["spoke-c"])
		}
		if msgs["spoke-a"] != "" || got.Status.FailedClusters != 2 {
			return fmt.Errorf("spoke-a %q, failed clusters %d", msgs["spoke-a"], got.Status.FailedClusters)
		}
		return nil
	})
	// spoke-c still has the ConfigMap with its own value: one bad object does not stop the rest.
	if v, err := e.valueOnSpoke("spoke-c", "settings"); err != nil || v != "spoke-c@ap" {
		t.Fatalf("spoke-c settings %q (%v)", v, err)
	}
}

func TestPruneSafety(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "yes"}}}})
	for _, c := range []string{"spoke-a", "spoke-b"} {
		cl := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: c}}
		e.updateHub(t, cl, func() { cl.Labels["fleet"] = "yes" })
	}
	sel := map[string]string{"ship": "yes"}
	for i := range 3 {
		e.create(t, configMap(fmt.Sprintf("cm-%d", i), sel, "v"))
	}
	e.create(t, configMap("cm-3", map[string]string{"ship": "yes", "tier": "keep"}, "v"))
	protected := configMap("kept", map[string]string{"ship": "yes", flotillav1.LabelProtected: "true"}, "v")
	e.create(t, protected)
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}},
			// An override on spoke-b alone gives each cluster a revision of its own: one
			// confirmation must still confirm the change on both.
			Overrides: []flotillav1.Override{{Name: "us", ClusterNames: []string{"spoke-b"},
				JSONPatch: []flotillav1.JSONPatchOperation{{Op: "add", Path: "/data/region", Value: &apiextensionsv1.JSON{Raw: []byte(`"us"`)}}}}}}}
	e.create(t, p)
	e.applied(t, "guarded", flotillav1.ReasonApplied, 2)
	owned := client.HasLabels{flotillav1.LabelOwner}

	t.Run("a protected object deleted on the hub stays on the spokes", func(t *testing.T) {
		if err := e.hub.Delete(ctx, protected); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the deletion seen", func() error {
			got := e.applied(t, "guarded", flotillav1.ReasonApplied, 2)
			if got.Status.SelectedObjects != 4 {
				return fmt.Errorf("%d objects selected", got.Status.SelectedObjects)
			}
			return nil
		})
		if n := e.countOnSpoke(t, "spoke-a", owned); n != 5 {
			t.Fatalf("%d objects on spoke-a, want 5 (the protected one kept)", n)
		}
	})

	t.Run("a change deleting more than the budget waits for confirmation", func(t *testing.T) {
		// A selector edit that leaves one of four selected objects (the protected one does
		// not count: it is never deleted).
		e.updatePropagation(t, "guarded", func(p *flotillav1.Propagation) {
			p.Spec.ResourceSelectors[0].LabelSelector.MatchLabels = map[string]string{"ship": "yes", "tier": "keep"}
		})
		got := e.condition(t, "guarded", flotillav1.PropagationPruneBlocked, metav1.ConditionTrue, "would delete 3 of the 4 objects")
		// The message names the command to paste: the owner with its namespace.
		msg := meta.FindStatusCondition(got.Status.Conditions, flotillav1.PropagationPruneBlocked).Message
		if want := "kubectl annotate --overwrite -n team propagation guarded " + flotillav1.AnnotationConfirmPrune + "="; !strings.Contains(msg, want) {
			t.Fatalf("PruneBlocked message %q does not name %q", msg, want)
		}
		spokes := []string{"spoke-a", "spoke-b"}
		deletes := func(c string) int {
			return e.countWrites(t, c, func(ev localfleet.AuditEvent) bool {
				return ev.Verb == "delete" && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Namespace == "team"
			})
		}
		before := map[string]int{}
		for _, c := range spokes {
			before[c] = deletes(c)
		}
		fleettest.Consistently(t, 2*time.Second, "nothing deleted", func() error {
			for _, c := range spokes {
				if n := deletes(c) - before[c]; n != 0 {
					return fmt.Errorf("%d ConfigMaps deleted on %s before the confirmation (audit log)", n, c)
				}
			}
			return nil
		})
		e.confirmPrune(t, "guarded", got)
		e.condition(t, "guarded", flotillav1.PropagationPruneBlocked, metav1.ConditionFalse, "")
		fleettest.Eventually(t, wait, "confirmed prune done on both clusters", func() error {
			for _, c := range spokes {
				if n := e.countOnSpoke(t, c, owned); n != 2 {
					return fmt.Errorf("%d objects left on %s, want 2 (cm-3 and the protected one)", n, c)
				}
				// One confirmation deleted the three stale ConfigMaps on both clusters, and
				// nothing else (audit log).
				if n := deletes(c) - before[c]; n != 3 {
					return fmt.Errorf("%d ConfigMaps deleted on %s, want 3 (audit log)", n, c)
				}
			}
			return nil
		})
	})

	t.Run("a placement that suddenly chooses nothing deletes nothing", func(t *testing.T) {
		e.selectClusters(t, map[string]string{"fleet": "typo"})
		e.condition(t, "guarded", flotillav1.PropagationPruneBlocked, metav1.ConditionTrue, "chooses no cluster")
		fleettest.Consistently(t, 2*time.Second, "nothing deleted", func() error {
			for _, s := range []string{"spoke-a", "spoke-b"} {
				if n := e.countOnSpoke(t, s, owned); n != 2 {
					return fmt.Errorf("%s: %d objects left", s, n)
				}
			}
			return nil
		})
	})

	t.Run("deleting a Cluster deletes nothing on it", func(t *testing.T) {
		e.selectClusters(t, map[string]string{"fleet": "yes"})
		e.applied(t, "guarded", flotillav1.ReasonApplied, 2)
		if err := e.hub.Delete(ctx, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-b"}}); err != nil {
			t.Fatal(err)
		}
		e.applied(t, "guarded", flotillav1.ReasonApplied, 1)
		fleettest.Consistently(t, 3*time.Second, "nothing deleted", func() error {
			if n := e.countOnSpoke(t, "spoke-b", owned); n != 2 {
				return fmt.Errorf("%d objects left", n)
			}
			return nil
		})
	})
}

// TestPruneBudgetZero: pruneBudgetPercent 0 means every deletion waits for confirmation (it
// once meant "no budget"). Only the spoke's audit log proves nothing was deleted meanwhile.
func TestPruneBudgetZero(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	sel := map[string]string{"strict": "yes"}
	for _, name := range []string{"s-0", "s-1"} {
		e.create(t, configMap(name, sel, "v"))
	}
	zero := int32(0)
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "strict", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}},
			Strategy:          flotillav1.PropagationStrategy{PruneBudgetPercent: &zero}}})
	e.applied(t, "strict", flotillav1.ReasonApplied, 1)
	if err := e.hub.Delete(ctx, configMap("s-1", nil, "")); err != nil {
		t.Fatal(err)
	}
	got := e.condition(t, "strict", flotillav1.PropagationPruneBlocked, metav1.ConditionTrue, "would delete 1 of the 2 objects")
	deletes := func() int {
		return e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" && ev.ObjectRef.Name == "s-1" })
	}
	fleettest.Consistently(t, 2*time.Second, "nothing deleted before the confirmation", func() error {
		if n := deletes(); n != 0 {
			return fmt.Errorf("%d deletes of s-1 by Flotilla", n)
		}
		return nil
	})
	e.confirmPrune(t, "strict", got)
	e.onSpoke(t, "spoke-a", configMap("s-1", nil, ""), true, nil)
	if n := deletes(); n != 1 {
		t.Errorf("%d deletes of s-1 after the confirmation, want 1", n)
	}
}

// TestFleetPruneBudget: a Placement that shrinks so that the owner leaves more than its budget's
// share of its clusters waits for confirmation, whatever each cluster's own share; the audit
// logs prove nothing was deleted meanwhile.
func TestFleetPruneBudget(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	e.create(t, configMap("fleet", nil, "v"))
	budget := int32(40)
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "fleet"}},
			Strategy:          flotillav1.PropagationStrategy{PruneBudgetPercent: &budget}}})
	e.applied(t, "fleet", flotillav1.ReasonApplied, 2)
	since := time.Now()
	e.selectClusters(t, map[string]string{"region": "eu"})
	got := e.condition(t, "fleet", flotillav1.PropagationPruneBlocked, metav1.ConditionTrue, "from 1 of the 2 clusters (spoke-b)")
	deletes := func() int {
		return e.countWrites(t, "spoke-b", func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" && ev.StageTimestamp.After(since) })
	}
	fleettest.Consistently(t, 2*time.Second, "nothing deleted before the confirmation", func() error {
		if n := deletes(); n != 0 {
			return fmt.Errorf("%d deletes on spoke-b by Flotilla", n)
		}
		return nil
	})
	e.confirmPrune(t, "fleet", got)
	e.onSpoke(t, "spoke-b", configMap("fleet", nil, ""), true, nil)
	e.applied(t, "fleet", flotillav1.ReasonApplied, 1)
}

// selectClusters changes the "all" Placement's cluster selector.
func (e *env) selectClusters(t *testing.T, labels map[string]string) {
	t.Helper()
	pl := &flotillav1.Placement{}
	if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "all"}, pl); err != nil {
		t.Fatal(err)
	}
	pl.Spec.ClusterSelector.MatchLabels = labels
	if err := e.hub.Update(context.Background(), pl); err != nil {
		t.Fatal(err)
	}
}

// confirmPrune annotates a Propagation with the confirmation its PruneBlocked condition asks for
// (the value after the last "=" of the message).
func (e *env) confirmPrune(t *testing.T, name string, blocked *flotillav1.Propagation) {
	t.Helper()
	c := meta.FindStatusCondition(blocked.Status.Conditions, flotillav1.PropagationPruneBlocked)
	value := c.Message[strings.LastIndex(c.Message, "=")+1:]
	e.updatePropagation(t, name, func(p *flotillav1.Propagation) {
		p.Annotations = map[string]string{flotillav1.AnnotationConfirmPrune: value}
	})
}
