package propagation_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// A cluster's placementLimits bound what every owner's divided workloads place there together:
// two Propagations created at once, each wanting half of its replicas on the limited cluster,
// share its room without exceeding it, the rest going elsewhere; raising a total does not push
// past it; lowering the limit moves the excess away once the other cluster is Ready; and the
// Cluster's status.placed says what is placed.
func TestPlacementLimitsAreNeverExceeded(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	limit := func(cpu string) {
		cl := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-a"}}
		e.updateHub(t, cl, func() { cl.Spec.PlacementLimits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)} })
	}
	limit("4")
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "halves", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted}}})
	apps := []string{"web", "api"}
	for _, name := range apps {
		d := deployment(name)
		d.Spec.Replicas = ptr(int32(6))
		d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		e.create(t, d)
	}
	for _, name := range apps {
		e.propagateDeployment(t, name, "halves")
	}

	// replicas returns what each app asks for on a spoke (0 when it is not there).
	replicas := func(spoke string) (map[string]int32, error) {
		out := map[string]int32{}
		for _, name := range apps {
			d := &appsv1.Deployment{}
			err := e.spokes[spoke].Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, d)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[name] = *d.Spec.Replicas
		}
		return out, nil
	}
	// settle waits until spoke-a runs onA replicas of the apps together and spoke-b the rest of
	// each total, failing at once if spoke-a ever holds more cpu (one per replica) than max.
	// Who gets the limited room first is first come, first served. Every copy is marked
	// Available as it goes, so that the moves on the way complete.
	settle := func(t *testing.T, max, onA int32, totals map[string]int32) {
		t.Helper()
		fleettest.Eventually(t, wait, "the apps placed within spoke-a's limit", func() error {
			a, err := replicas("spoke-a")
			if err != nil {
				return err
			}
			if sum := a["web"] + a["api"]; sum > max {
				t.Fatalf("spoke-a runs %d replicas of 1 cpu, its placement limit is %d cpu: %v", sum, max, a)
			}
			b, err := replicas("spoke-b")
			if err != nil {
				return err
			}
			for spoke, on := range map[string]map[string]int32{"spoke-a": a, "spoke-b": b} {
				for name := range on {
					fleettest.MarkAvailable(t, e.spokes[spoke], client.ObjectKey{Namespace: "team", Name: name})
				}
			}
			if a["web"]+a["api"] != onA || a["web"]+b["web"] != totals["web"] || a["api"]+b["api"] != totals["api"] {
				return fmt.Errorf("spoke-a %v, spoke-b %v", a, b)
			}
			return nil
		})
	}
	placedCPU := func(t *testing.T, cpu string) {
		t.Helper()
		fleettest.Eventually(t, wait, "spoke-a's status.placed", func() error {
			cl := &flotillav1.Cluster{}
			if err := e.hub.Get(ctx, client.ObjectKey{Name: "spoke-a"}, cl); err != nil {
				return err
			}
			if got := cl.Status.Placed.Cpu(); !got.Equal(resource.MustParse(cpu)) {
				return fmt.Errorf("status.placed cpu %s, want %s", got, cpu)
			}
			return nil
		})
	}

	t.Run("two owners share the limited cluster's room", func(t *testing.T) {
		// Unlimited, each would run 3 of its 6 on spoke-a: 6 cpu where 4 are admitted.
		settle(t, 4, 4, map[string]int32{"web": 6, "api": 6})
		placedCPU(t, "4")
	})

	t.Run("a higher total does not push past the limit", func(t *testing.T) {
		web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
		e.updateHub(t, web, func() { web.Spec.Replicas = ptr(int32(12)) })
		settle(t, 4, 4, map[string]int32{"web": 12, "api": 6})
		placedCPU(t, "4")
	})

	t.Run("a lower limit moves the excess away, make before break", func(t *testing.T) {
		limit("2")
		// Until spoke-b's bigger copies are Available, spoke-a keeps what it runs (4).
		settle(t, 4, 2, map[string]int32{"web": 12, "api": 6})
		placedCPU(t, "2")
	})
}
