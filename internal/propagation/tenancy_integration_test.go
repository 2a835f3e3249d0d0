package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestNamespacedPropagationIsConfined proves the tenancy rule: whoever may create a ConfigMap,
// a Placement and a Propagation in one hub namespace reaches that namespace on the spokes and
// nothing else. Only the spokes' audit logs prove that nothing was written: an object Flotilla
// wrongly created and then removed would not be seen by reading the spoke afterwards.
func TestNamespacedPropagationIsConfined(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	writes := func(plane, resource string) int {
		return e.countWrites(t, plane, func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Resource == resource })
	}

	t.Run("a manifest with a cluster-admin binding or another namespace's object is refused whole", func(t *testing.T) {
		e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "escalate", Namespace: "team"}, Data: map[string]string{
			"rbac.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: team-admin\n" +
				"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\n" +
				"subjects:\n- kind: ServiceAccount\n  name: default\n  namespace: team\n",
			"other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  namespace: kube-system\ndata:\n  x: y\n",
			"own.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: harmless\ndata:\n  x: y\n",
		}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "escalate", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				Manifests: []flotillav1.ManifestSource{{Kind: "ConfigMap", Name: "escalate"}},
				Strategy:  flotillav1.PropagationStrategy{Conflict: flotillav1.ConflictAdopt}}})
		p := e.applied(t, "escalate", flotillav1.ReasonInvalidSpec, 0)
		msg := apimeta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied).Message
		for _, want := range []string{`ClusterRoleBinding "team-admin" is cluster-scoped`, `ConfigMap "planted" names namespace "kube-system"`, "ClusterPropagation"} {
			if !strings.Contains(msg, want) {
				t.Errorf("condition message %q does not say %q", msg, want)
			}
		}
		// A Propagation that converges afterwards shows the controller had every chance to write.
		e.create(t, configMap("marker", nil, "v"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "marker"}}}})
		e.applied(t, "marker", flotillav1.ReasonApplied, 2)
		for _, spoke := range []string{"spoke-a", "spoke-b"} {
			if n := writes(spoke, "clusterrolebindings"); n != 0 {
				t.Errorf("%s: %d writes of ClusterRoleBindings by Flotilla", spoke, n)
			}
			if n := e.countWrites(t, spoke, func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Namespace == "kube-system" || ev.ObjectRef.Name == "harmless"
			}); n != 0 {
				t.Errorf("%s: %d writes of the refused manifest's objects", spoke, n)
			}
		}
	})

	t.Run("a kind the hub does not know, cluster-scoped on one spoke, is refused there only", func(t *testing.T) {
		preserve := true
		gadgets := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "example.com", Scope: apiextensionsv1.ClusterScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", Plural: "gadgets", Singular: "gadget"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: &preserve}}}},
			},
		}
		if err := e.spokes["spoke-a"].Create(ctx, gadgets); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "gadgets CRD established on spoke-a", func() error {
			if err := e.spokes["spoke-a"].Get(ctx, client.ObjectKeyFromObject(gadgets), gadgets); err != nil {
				return err
			}
			for _, c := range gadgets.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("not established")
		})
		e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gadget", Namespace: "team"}, Data: map[string]string{
			"gadget.yaml": "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  size: 1\n",
		}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "gadget", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				Manifests: []flotillav1.ManifestSource{{Kind: "ConfigMap", Name: "gadget"}}}})
		e.propagationCondition(t, "gadget", flotillav1.ReasonApplyFailed, "cluster-scoped on this cluster")
		if n := writes("spoke-a", "gadgets"); n != 0 {
			t.Errorf("spoke-a: %d writes of Gadgets by Flotilla", n)
		}
	})

	t.Run("a ClusterPropagation may not use a tenant's Placement", func(t *testing.T) {
		since := time.Now()
		e.create(t, &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "steered"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu", Namespace: "team"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "team"}}}})
		cp := &flotillav1.ClusterPropagation{}
		fleettest.Eventually(t, wait, "ClusterPropagation steered InvalidSpec", func() error {
			if err := e.hub.Get(ctx, client.ObjectKey{Name: "steered"}, cp); err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(cp.Status.Conditions, flotillav1.PropagationApplied)
			if c == nil || c.Reason != flotillav1.ReasonInvalidSpec || !strings.Contains(c.Message, "not an admin namespace") {
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		for _, spoke := range []string{"spoke-a", "spoke-b"} {
			if n := e.countWrites(t, spoke, func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Resource == "namespaces" && ev.StageTimestamp.After(since)
			}); n != 0 {
				t.Errorf("%s: %d writes of Namespaces by Flotilla", spoke, n)
			}
		}
	})
}
