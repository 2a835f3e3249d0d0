package propagation_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A cluster its Propagation pins to an older revision (spec.revisionPins) keeps that revision
// while the others move on, and drift there is corrected back to the pinned revision;
// unpinned, it catches up.
func TestPinnedRevision(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	e.create(t, configMap("pinned", nil, "v1"))
	e.create(t, propagationOf("pinned", flotillav1.PropagationStrategy{}, "ConfigMap/pinned"))
	e.applied(t, "pinned", flotillav1.ReasonApplied, 2)
	first := e.revisions(t, "pinned", 1)[0]
	if first.Revision != 1 || len(first.OwnerReferences) != 1 || first.OwnerReferences[0].Name != "pinned" {
		t.Fatalf("first revision %s: number %d, owners %v", first.Name, first.Revision, first.OwnerReferences)
	}

	// Pin spoke-b to the first revision, as a person or a rollout tool would: on the
	// Propagation (the Delivery records are the controller's alone).
	pin := func(revision string) {
		t.Helper()
		e.updatePropagation(t, "pinned", func(p *flotillav1.Propagation) {
			p.Spec.RevisionPins = nil
			if revision != "" {
				p.Spec.RevisionPins = []flotillav1.RevisionPin{{Cluster: "spoke-b", Revision: revision}}
			}
		})
	}
	pin(first.Name)
	hubCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: "team"}}
	e.updateHub(t, hubCM, func() { hubCM.Data["v"] = "v2" })
	e.revisions(t, "pinned", 2)

	t.Run("the pinned cluster keeps its revision while the others move on", func(t *testing.T) {
		e.waitValue(t, "spoke-a", "pinned", "v2")
		p := e.applied(t, "pinned", flotillav1.ReasonApplied, 2)
		for _, r := range p.Status.ClusterResults {
			if r.Cluster == "spoke-b" && r.Revision != first.Labels["flotilla.dev/revision"] {
				t.Errorf("spoke-b is at revision %q, want the pinned %q", r.Revision, first.Labels["flotilla.dev/revision"])
			}
		}
		if v, err := e.valueOnSpoke("spoke-b", "pinned"); err != nil || v != "v1" {
			t.Errorf("spoke-b has %q (%v), want the pinned v1", v, err)
		}
	})

	t.Run("drift on the pinned cluster is corrected to the pinned revision", func(t *testing.T) {
		e.editOnSpoke(t, "spoke-b", "pinned", "changed")
		e.waitValue(t, "spoke-b", "pinned", "v1")
	})

	t.Run("unpinned, the cluster catches up", func(t *testing.T) {
		pin("")
		e.waitValue(t, "spoke-b", "pinned", "v2")
	})

	t.Run("a pinned revision that is not kept is an error on that cluster only", func(t *testing.T) {
		pin("propagation.pinned.0000000000000000")
		p := e.condition(t, "pinned", flotillav1.PropagationApplied, "False", "is not kept")
		for _, r := range p.Status.ClusterResults {
			if r.Cluster == "spoke-a" && r.Failed != 0 {
				t.Errorf("spoke-a failed too: %+v", r)
			}
		}
		if v, err := e.valueOnSpoke("spoke-b", "pinned"); err != nil || v != "v2" {
			t.Errorf("spoke-b has %q (%v), want what it had (v2)", v, err)
		}
	})
}

// waitValue waits until a spoke's ConfigMap has a value.
func (e *env) waitValue(t *testing.T, spoke, name, want string) {
	t.Helper()
	fleettest.Eventually(t, wait, fmt.Sprintf("%s/%s on %s = %q", "team", name, spoke, want), func() error {
		if v, err := e.valueOnSpoke(spoke, name); err != nil || v != want {
			return fmt.Errorf("value %q (%v)", v, err)
		}
		return nil
	})
}

// revisions waits until a Propagation keeps n revisions and returns them, oldest first.
func (e *env) revisions(t *testing.T, owner string, n int) []appsv1.ControllerRevision {
	t.Helper()
	var got []appsv1.ControllerRevision
	label := render.Owner{Kind: "Propagation", Namespace: "team", Name: owner}.LabelValue()
	fleettest.Eventually(t, wait, fmt.Sprintf("%d revisions of %s", n, owner), func() error {
		var list appsv1.ControllerRevisionList
		if err := e.hub.List(context.Background(), &list, client.InNamespace("team"), client.MatchingLabels{flotillav1.LabelOwner: label}); err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("%d revisions", len(list.Items))
		}
		got = list.Items
		return nil
	})
	sort.Slice(got, func(i, j int) bool { return got[i].Revision < got[j].Revision })
	return got
}
