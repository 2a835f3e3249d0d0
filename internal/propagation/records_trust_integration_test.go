package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/placement"
)

// Delivery records live in the owners' namespaces. A tenant holding `edit` there, and every
// Flotilla kind besides, may not write one: the ValidatingAdmissionPolicy refuses it. And a
// record someone other than the controller wrote (here the admin, as a record from before the
// policy would be), labelled with an admin Placement's reference, naming a cordoned cluster and
// placing 4 cpu on a limited one, steers nothing: the admin Placement does not choose the
// cordoned cluster, a ClusterPropagation on it writes nothing there (the spoke's audit log),
// and another team's Deployment keeps the limited cluster's room.
func TestForgedDeliveryRecordsAreIgnored(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	ctx := context.Background()
	for _, ns := range []string{"team", "mallory", "shared"} {
		e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	// spoke-b is cordoned before anything is placed; spoke-a admits 4 cpu.
	b := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-b"}}
	e.updateHub(t, b, func() { b.Spec.Unschedulable = true })
	a := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-a"}}
	e.updateHub(t, a, func() { a.Spec.PlacementLimits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")} })
	admin := client.ObjectKey{Namespace: membership.Namespace, Name: "fleet"}

	// The tenant may manage Flotilla's kinds in its namespace (as it must, to propagate).
	flotillaEditor := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-editor"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{flotillav1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	e.create(t, flotillaEditor)
	fleettest.Grant(t, ctx, e.hub, "mallory", fleettest.Tenant, "edit")
	fleettest.Grant(t, ctx, e.hub, "mallory", fleettest.Tenant, flotillaEditor.Name)
	tenant, err := client.New(fleettest.As(e.fleet.Hub().RESTConfig(), fleettest.Tenant), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	// forged is a record in mallory labelled for the admin Placement, naming cluster, with
	// placed cpu; its owner is a Propagation of mallory that does not exist.
	forged := func(name, cluster, cpu string) *flotillav1.Delivery {
		return &flotillav1.Delivery{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "mallory", Labels: ledger.PlacementSelector(admin)},
			Spec: flotillav1.DeliverySpec{
				Owner:   flotillav1.DeliveryOwner{APIVersion: flotillav1.GroupVersion.String(), Kind: "Propagation", Namespace: "mallory", Name: "steer"},
				Cluster: cluster, Kinds: []string{"/v1/Namespace"},
				Placed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			},
		}
	}
	refusedByPolicy := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "only the hub controller") {
			t.Errorf("%s as the tenant: %v, want refused by the policy", what, err)
		}
	}

	t.Run("the tenant may not create, change or delete a record; the garbage collector may delete", func(t *testing.T) {
		refusedByPolicy(t, "create", tenant.Create(ctx, forged("propagation.steer.spoke-b", "spoke-b", "0")))
		planted := forged("propagation.planted.spoke-a", "spoke-a", "0")
		e.create(t, planted) // the admin is the controller's identity here
		changed := planted.DeepCopy()
		changed.Spec.Cluster = "spoke-b"
		refusedByPolicy(t, "update", tenant.Update(ctx, changed))
		refusedByPolicy(t, "delete", tenant.Delete(ctx, planted))
		// The garbage collector (a record goes with its owner) may delete, as
		// kube-controller-manager runs it with --use-service-account-credentials.
		gcUser := "system:serviceaccount:kube-system:generic-garbage-collector"
		fleettest.Grant(t, ctx, e.hub, "mallory", gcUser, flotillaEditor.Name)
		gc, err := client.New(fleettest.As(e.fleet.Hub().RESTConfig(), gcUser, "system:serviceaccounts"), client.Options{Scheme: install.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		if err := gc.Delete(ctx, planted); err != nil {
			t.Errorf("delete as the garbage collector: %v", err)
		}
	})

	// Records from before the policy: the admin writes them.
	e.create(t, forged("propagation.steer.spoke-b", "spoke-b", "0"))
	e.create(t, forged("propagation.steer.spoke-a", "spoke-a", "4"))
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: admin.Name, Namespace: admin.Namespace},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})

	t.Run("the admin Placement does not choose the cordoned cluster, and says why it ignores the records", func(t *testing.T) {
		p := &flotillav1.Placement{}
		fleettest.Eventually(t, wait, "Placement fleet scheduled on spoke-a only", func() error {
			if err := e.hub.Get(ctx, admin, p); err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(p.Status.Conditions, flotillav1.PlacementScheduled)
			if c == nil || p.Status.ObservedGeneration != p.Generation {
				return fmt.Errorf("not scheduled yet")
			}
			var chosen []string
			for _, d := range p.Status.Decisions {
				chosen = append(chosen, d.ClusterName)
			}
			if len(chosen) != 1 || chosen[0] != "spoke-a" {
				return fmt.Errorf("decisions %v, want spoke-a only", chosen)
			}
			return nil
		})
		fleettest.Eventually(t, wait, "an Event on the Placement naming the forged record", func() error {
			for _, ev := range e.hubEventsIn(t, admin.Namespace, admin.Name, placement.ReasonUntrustedRecords) {
				if strings.Contains(ev.Message, "mallory/propagation.steer.spoke-b") {
					return nil
				}
			}
			var all corev1.EventList
			_ = e.hub.List(ctx, &all)
			var seen []string
			for _, ev := range all.Items {
				seen = append(seen, ev.Namespace+"/"+ev.InvolvedObject.Name+":"+ev.Reason+":"+ev.Message)
			}
			return fmt.Errorf("no %s Event naming mallory/propagation.steer.spoke-b: %v", placement.ReasonUntrustedRecords, seen)
		})
	})

	t.Run("a ClusterPropagation on the admin Placement writes nothing to the cordoned cluster", func(t *testing.T) {
		e.create(t, &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: admin.Name, Namespace: admin.Namespace},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "shared"}}}})
		e.onSpoke(t, "spoke-a", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, false, nil)
		cp := &flotillav1.ClusterPropagation{}
		fleettest.Eventually(t, wait, "ClusterPropagation shared applied to one cluster", func() error {
			if err := e.hub.Get(ctx, client.ObjectKey{Name: "shared"}, cp); err != nil {
				return err
			}
			if c := apimeta.FindStatusCondition(cp.Status.Conditions, flotillav1.PropagationApplied); c == nil || c.Reason != flotillav1.ReasonApplied || cp.Status.AppliedClusters != 1 {
				return fmt.Errorf("condition %+v, applied to %d", c, cp.Status.AppliedClusters)
			}
			return nil
		})
		if n := e.countWrites(t, "spoke-b", func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Name == "shared" }); n != 0 {
			t.Errorf("spoke-b (cordoned, named by a forged record): %d writes by Flotilla", n)
		}
	})

	t.Run("another team keeps the limited cluster's room", func(t *testing.T) {
		e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
				Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted}}})
		d := deployment("web")
		d.Spec.Replicas = ptr(int32(4))
		d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		e.create(t, d)
		e.propagateDeployment(t, "web", "eu")
		onA := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
		e.onSpoke(t, "spoke-a", onA, false, func() error {
			if *onA.Spec.Replicas != 4 {
				return fmt.Errorf("%d replicas on spoke-a, want all 4 (the forged 4 cpu must not count)", *onA.Spec.Replicas)
			}
			return nil
		})
		fleettest.Eventually(t, wait, "spoke-a's status.placed counts web only", func() error {
			cl := &flotillav1.Cluster{}
			if err := e.hub.Get(ctx, client.ObjectKey{Name: "spoke-a"}, cl); err != nil {
				return err
			}
			if got := cl.Status.Placed.Cpu(); !got.Equal(resource.MustParse("4")) {
				return fmt.Errorf("status.placed cpu %s, want 4 (web's)", got)
			}
			return nil
		})
	})
}

// hubEventsIn returns the hub's Events about an object of a namespace with a reason.
func (e *env) hubEventsIn(t *testing.T, namespace, name, reason string) []corev1.Event {
	t.Helper()
	var events corev1.EventList
	if err := e.hub.List(context.Background(), &events, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}
