package propagation_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// tenantClientForSecrets binds fleettest.Tenant in team to what `edit` plus Flotilla's kinds give a tenant
// (the hub plane runs no controller to aggregate roles into `edit`, so the rules this test
// uses are bound explicitly) and returns a client acting as that tenant.
func (e *env) tenantClientForSecrets(t *testing.T) client.Client {
	t.Helper()
	ctx := context.Background()
	if err := e.hub.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tenant-edit"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"*"}},
		{APIGroups: []string{flotillav1.GroupVersion.Group}, Resources: []string{"propagations", "placements"}, Verbs: []string{"*"}},
	}}); err != nil {
		t.Fatal(err)
	}
	fleettest.Grant(t, ctx, e.hub, "team", fleettest.Tenant, "edit")
	fleettest.Grant(t, ctx, e.hub, "team", fleettest.Tenant, "tenant-edit")
	c, err := client.New(fleettest.As(e.fleet.Hub().RESTConfig(), fleettest.Tenant), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCredentialSecretsAreRefused proves that a tenant cannot deliver a credential Secret that
// sits in its namespace (an Argo CD cluster Secret, a Cluster API kubeconfig, a kubeconfig or
// ClusterProfile credentials Secret), by name, by a selector matching it, or as a manifest
// source: the Propagation is refused with the reason, nothing is written to the spoke (its
// audit log), and the credential's bytes appear nowhere a reader of the hub can list.
func TestCredentialSecretsAreRefused(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	const canary = "CANARY-credential-7c2b"
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	tenant := e.tenantClientForSecrets(t)
	creds := map[string]*corev1.Secret{
		"argocd-cluster": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}}},
		"prod-kubeconfig": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "prod"}},
			Type: "cluster.x-k8s.io/secret"},
		"mcr-kubeconfig": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"sigs.k8s.io/multicluster-runtime-kubeconfig": "true"}}},
		"profile-creds":  {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x-k8s.io/cluster-profile": "prod"}}},
	}
	for name, s := range creds {
		s.Name, s.Namespace = name, "team"
		s.Labels["shipped"] = "yes"
		s.StringData = map[string]string{"config": canary}
		e.create(t, s)
	}
	e.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team", Labels: map[string]string{"shipped": "yes"}},
		StringData: map[string]string{"password": "ordinary"}})

	create := func(name string, spec flotillav1.PropagationSpec) {
		t.Helper()
		spec.PlacementRef = flotillav1.PlacementRef{Name: "eu"}
		if err := tenant.Create(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}, Spec: spec}); err != nil {
			t.Fatalf("the tenant creates Propagation %s: %v", name, err)
		}
	}
	if err := tenant.Create(ctx, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}}); err != nil {
		t.Fatal(err)
	}
	secretsNamed := func(name string) []flotillav1.ResourceSelector {
		return []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Secret", Name: name}}
	}
	for name := range creds {
		create("by-name-"+name, flotillav1.PropagationSpec{ResourceSelectors: secretsNamed(name)})
	}
	create("by-label", flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Secret",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"shipped": "yes"}}}}})
	create("as-manifest", flotillav1.PropagationSpec{Manifests: []flotillav1.ManifestSource{{Kind: "Secret", Name: "argocd-cluster"}}})
	// The control: an ordinary Secret of the same namespace is delivered by the same tenant.
	create("ordinary", flotillav1.PropagationSpec{ResourceSelectors: secretsNamed("app")})

	t.Run("each is refused with the reason on the Propagation", func(t *testing.T) {
		for name, why := range map[string]string{
			"by-name-argocd-cluster":  "Argo CD credentials",
			"by-name-prod-kubeconfig": "Cluster API",
			"by-name-mcr-kubeconfig":  "kubeconfig Secret",
			"by-name-profile-creds":   "ClusterProfile",
			"by-label":                "credential Secrets, which are never delivered",
			"as-manifest":             "holds credentials",
		} {
			e.propagationCondition(t, name, flotillav1.ReasonInvalidSpec, why)
			e.hubEvent(t, name, flotillav1.ReasonInvalidSpec, why)
		}
		e.applied(t, "ordinary", flotillav1.ReasonApplied, 1)
	})

	t.Run("nothing of them is written to the spoke", func(t *testing.T) {
		if n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool {
			_, credential := creds[ev.ObjectRef.Name]
			return ev.ObjectRef.Resource == "secrets" && ev.ObjectRef.Name != "app" && (credential || ev.ObjectRef.Namespace == "team")
		}); n != 0 {
			t.Errorf("Flotilla made %d writes of credential Secrets to the spoke", n)
		}
		if n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Name == "app" }); n == 0 {
			t.Error("the ordinary Secret was not written either: the check proves nothing")
		}
		fleettest.NoCanary(t, ctx, e.fleet.Hub().RESTConfig(), canary)
		fleettest.NoCanary(t, ctx, e.fleet.Plane("spoke-a").RESTConfig(), canary)
		var onSpoke corev1.SecretList
		if err := e.spokes["spoke-a"].List(ctx, &onSpoke, client.InNamespace("team")); err != nil {
			t.Fatal(err)
		}
		for _, s := range onSpoke.Items {
			if strings.Contains(string(s.Data["config"]), canary) {
				t.Errorf("Secret %s on the spoke holds the credential", s.Name)
			}
		}
	})
}
