package propagation_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestManifestsAndAdoption(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})

	t.Run("manifests in a ConfigMap and a Secret are delivered, and follow their changes", func(t *testing.T) {
		e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "addon", Namespace: "team"}, Data: map[string]string{
			"addon.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: addon\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: addon-config\ndata:\n  level: info\n",
		}})
		e.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "addon-secret", Namespace: "team"}, StringData: map[string]string{
			"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: addon-token\nstringData:\n  token: s3cr3t\n",
		}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "addon", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"}, Manifests: []flotillav1.ManifestSource{
				{Kind: "ConfigMap", Name: "addon"}, {Kind: "Secret", Name: "addon-secret"}}}})
		e.onSpoke(t, "spoke-a", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "addon", Namespace: "team"}}, false, nil)
		e.onSpoke(t, "spoke-a", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "addon-token", Namespace: "team"}}, false, nil)
		cfg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "addon-config", Namespace: "team"}}
		e.onSpoke(t, "spoke-a", cfg, false, nil)
		p := e.applied(t, "addon", flotillav1.ReasonApplied, 1)
		if p.Status.SelectedObjects != 3 {
			t.Fatalf("selectedObjects = %d, want 3", p.Status.SelectedObjects)
		}

		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "addon-secret", Namespace: "team"}}
		e.updateHub(t, secret, func() {
			secret.Data["secret.yaml"] = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: addon-token\nstringData:\n  token: rotated\n")
		})
		token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "addon-token", Namespace: "team"}}
		e.onSpoke(t, "spoke-a", token, false, func() error {
			if string(token.Data["token"]) != "rotated" {
				return fmt.Errorf("token not updated yet")
			}
			return nil
		})
	})

	t.Run("a malformed manifest is reported and holds what is delivered", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "addon", Namespace: "team"}}
		e.updateHub(t, cm, func() { cm.Data["broken.yaml"] = "kind: ConfigMap\nmetadata:\n  name: nameless-version\n" })
		e.applied(t, "addon", flotillav1.ReasonInvalidSpec, 0)
		e.onSpoke(t, "spoke-a", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "addon", Namespace: "team"}}, false, nil)
	})

	t.Run("Adopt takes over an object the spoke already had", func(t *testing.T) {
		if err := e.spokes["spoke-a"].Create(ctx, configMap("legacy", nil, "old")); err != nil {
			t.Fatal(err)
		}
		e.create(t, configMap("legacy", map[string]string{"adopt": "yes"}, "new"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "adopter", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "legacy"}},
				Strategy:          flotillav1.PropagationStrategy{Conflict: flotillav1.ConflictAdopt}}})
		legacy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "team"}}
		e.onSpoke(t, "spoke-a", legacy, false, func() error {
			if legacy.Data["v"] != "new" || legacy.Labels[flotillav1.LabelOwner] == "" {
				return fmt.Errorf("not adopted: %v %v", legacy.Data, legacy.Labels)
			}
			return nil
		})
		e.applied(t, "adopter", flotillav1.ReasonApplied, 1)
	})
}
