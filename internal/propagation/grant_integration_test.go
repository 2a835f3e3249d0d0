package propagation_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// TestForbiddenByTheSpokesGrant joins a spoke with `--role` naming a ClusterRole that manages
// ConfigMaps only: a Propagation of a ConfigMap and a Secret delivers the ConfigMap, and the
// Secret fails with a message that names the grant.
func TestForbiddenByTheSpokesGrant(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	spoke := e.fleet.Plane("spoke-a")
	if err := e.spokes["spoke-a"].Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "configmaps-only"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces", "nodes"}, Verbs: []string{"get", "list", "watch", "create"}},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := membership.Join(ctx, e.hub, membership.JoinOptions{Name: "spoke-a", Spoke: spoke.RESTConfig(), Role: "configmaps-only",
		Labels: map[string]string{"region": "eu"}}); err != nil {
		t.Fatal(err)
	}

	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterNames: []string{"spoke-a"}}})
	e.create(t, configMap("allowed", map[string]string{"app": "grant"}, "x"))
	e.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "denied", Namespace: "team", Labels: map[string]string{"app": "grant"}}, StringData: map[string]string{"k": "v"}})
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "grant", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"}, ResourceSelectors: []flotillav1.ResourceSelector{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "allowed"}, {APIVersion: "v1", Kind: "Secret", Name: "denied"}}}})

	want := "secret team/denied: read: forbidden by the spoke's grant (ClusterRole configmaps-only): "
	p := e.propagationCondition(t, "grant", flotillav1.ReasonApplyFailed, "forbidden by the spoke's grant (ClusterRole configmaps-only)")
	r := p.Status.ClusterResults[0]
	if r.Applied != 1 || r.Failed != 1 || !strings.Contains(r.Message, want) {
		t.Fatalf("result %+v; want one applied, one failed with %q", r, want)
	}
	e.onSpoke(t, "spoke-a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed", Namespace: "team"}}, false, nil)
}
