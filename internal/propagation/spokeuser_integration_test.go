package propagation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// TestSpokeUserCannotSteerPruneOrOwnership plays a spoke user (edit in one namespace of one
// spoke) who forges Flotilla's ownership marks, and a hub tenant who adopts what a spoke's
// administrator made in its namespace. Every claim that nothing was deleted or written is read
// from the spoke's audit log.
func TestSpokeUserCannotSteerPruneOrOwnership(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	spoke := e.spokes["spoke-a"]
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	for _, ns := range []string{"team", "elsewhere"} {
		if err := spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	fleettest.Grant(t, ctx, spoke, "elsewhere", fleettest.SpokeUser, "edit")
	fleettest.Grant(t, ctx, spoke, "team", fleettest.SpokeUser+"-team", "edit")
	attacker, err := client.New(fleettest.As(e.fleet.Plane("spoke-a").RESTConfig(), fleettest.SpokeUser), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	deletes := func(match func(localfleet.AuditEvent) bool) int {
		return e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" && match(ev) })
	}

	t.Run("objects marked as an owner's in another namespace do not let a prune through", func(t *testing.T) {
		for i := range 3 {
			e.create(t, configMap(fmt.Sprintf("real-%d", i), map[string]string{"set": "old"}, "v"))
		}
		e.create(t, configMap("replacement", map[string]string{"set": "new"}, "v"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "budgeted", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"set": "old"}}}}}})
		e.applied(t, "budgeted", flotillav1.ReasonApplied, 1)

		// The spoke user, who cannot touch namespace team, plants objects carrying the
		// Propagation's marks (both are derived from its name) in their own namespace: two
		// plain, eight protected, to make a large prune look small.
		owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "budgeted"}
		for i := range 10 {
			labels := map[string]string{flotillav1.LabelOwner: owner.LabelValue()}
			if i >= 2 {
				labels[flotillav1.LabelProtected] = "true"
			}
			decoy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("decoy-%d", i), Namespace: "elsewhere", Labels: labels,
				Annotations: map[string]string{flotillav1.AnnotationOwner: owner.String()}}}
			if err := attacker.Create(ctx, decoy); err != nil {
				t.Fatal(err)
			}
		}

		// A change that removes every real object: held, nothing deleted.
		e.updatePropagation(t, "budgeted", func(p *flotillav1.Propagation) {
			p.Spec.ResourceSelectors[0].LabelSelector.MatchLabels = map[string]string{"set": "new"}
		})
		blocked := e.condition(t, "budgeted", flotillav1.PropagationPruneBlocked, metav1.ConditionTrue, "would delete 3 of the 4 objects")
		fleettest.Consistently(t, 3*time.Second, "no ConfigMap deleted", func() error {
			if n := deletes(func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Resource == "configmaps" }); n != 0 {
				return fmt.Errorf("%d deletes of ConfigMaps by Flotilla", n)
			}
			return nil
		})

		// Confirmed: the owner's own objects go, the planted ones are not its to delete.
		e.confirmPrune(t, "budgeted", blocked)
		e.condition(t, "budgeted", flotillav1.PropagationPruneBlocked, metav1.ConditionFalse, "")
		fleettest.Eventually(t, wait, "the confirmed prune done", func() error {
			if n := deletes(func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Namespace == "team" && ev.ObjectRef.Resource == "configmaps"
			}); n != 3 {
				return fmt.Errorf("%d deletes in team, want 3", n)
			}
			return nil
		})
		if n := deletes(func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Namespace == "elsewhere" }); n != 0 {
			t.Errorf("%d deletes by Flotilla in the spoke user's namespace", n)
		}
	})

	t.Run("an owner annotation under another owner's label claims nothing", func(t *testing.T) {
		e.create(t, configMap("shared", map[string]string{"shared": "holder"}, "holder's"))
		// The holder reports changes made on the cluster and leaves them.
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "holder", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "shared"}},
				Strategy:          flotillav1.PropagationStrategy{Drift: flotillav1.DriftReport}}})
		e.applied(t, "holder", flotillav1.ReasonApplied, 1)
		// The claimant delivers a manifest of the same ConfigMap with its own value.
		e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "team"}, Data: map[string]string{
			"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  v: claimant's\n"}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "claimant", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				Manifests: []flotillav1.ManifestSource{{Kind: "ConfigMap", Name: "claim"}},
				Strategy:  flotillav1.PropagationStrategy{Conflict: flotillav1.ConflictAdopt}}})
		e.propagationCondition(t, "claimant", flotillav1.ReasonConflict, "held by another owner")

		// A user with edit in team on the spoke names the claimant in the object's owner
		// annotation; its owner label still names the holder.
		claimant := render.Owner{Kind: "Propagation", Namespace: "team", Name: "claimant"}
		insider, err := client.New(fleettest.As(e.fleet.Plane("spoke-a").RESTConfig(), fleettest.SpokeUser+"-team"), client.Options{Scheme: install.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "owner annotation forged", func() error {
			cm := &corev1.ConfigMap{}
			if err := insider.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shared"}, cm); err != nil {
				return err
			}
			cm.Annotations[flotillav1.AnnotationOwner] = claimant.String()
			return insider.Update(ctx, cm)
		})
		e.updatePropagation(t, "claimant", func(p *flotillav1.Propagation) {
			p.Annotations = map[string]string{"retry": "now"} // a fresh look at the cluster
		})
		fleettest.Consistently(t, 5*time.Second, "the holder's value kept", func() error {
			cm := &corev1.ConfigMap{}
			if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shared"}, cm); err != nil {
				return err
			}
			if cm.Data["v"] != "holder's" || cm.Labels[flotillav1.LabelOwner] != (render.Owner{Kind: "Propagation", Namespace: "team", Name: "holder"}).LabelValue() {
				return fmt.Errorf("taken over: data %v, labels %v", cm.Data, cm.Labels)
			}
			return nil
		})
		e.propagationCondition(t, "claimant", flotillav1.ReasonConflict, "held by another owner")
	})

	t.Run("an object adopted from the spoke's administrator is never deleted", func(t *testing.T) {
		// The spoke's administrator limits namespace team; its users cannot change that.
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "team"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
		if err := spoke.Create(ctx, quota); err != nil {
			t.Fatal(err)
		}
		// The hub tenant adopts it, then lets go of it: removing the Propagation would delete
		// its objects everywhere.
		e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: "team"}, Data: map[string]string{
			"quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: limits\nspec:\n  hard:\n    pods: \"10\"\n"}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "adopter", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				Manifests: []flotillav1.ManifestSource{{Kind: "ConfigMap", Name: "quota"}},
				Strategy:  flotillav1.PropagationStrategy{Conflict: flotillav1.ConflictAdopt}}})
		e.applied(t, "adopter", flotillav1.ReasonApplied, 1)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(quota), quota); err != nil {
			t.Fatal(err)
		}
		if quota.Annotations[flotillav1.AnnotationAdopted] != "Propagation/team/adopter" {
			t.Fatalf("the adopted quota carries annotations %v", quota.Annotations)
		}
		if err := e.hub.Delete(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "adopter", Namespace: "team"}}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the Propagation gone", func() error {
			err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "adopter"}, &flotillav1.Propagation{})
			if err == nil {
				return fmt.Errorf("still there")
			}
			return client.IgnoreNotFound(err)
		})
		if n := deletes(func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Resource == "resourcequotas" }); n != 0 {
			t.Errorf("%d deletes of ResourceQuotas by Flotilla", n)
		}
		// Released: no mark of Flotilla's is left on it.
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(quota), quota); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{flotillav1.AnnotationOwner, flotillav1.AnnotationHash, flotillav1.AnnotationAdopted} {
			if _, ok := quota.Annotations[key]; ok {
				t.Errorf("the released quota still carries %s", key)
			}
		}
		if _, ok := quota.Labels[flotillav1.LabelOwner]; ok {
			t.Errorf("the released quota still carries the label %s", flotillav1.LabelOwner)
		}
	})
}
