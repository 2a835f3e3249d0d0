package fleettest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The three attackers every security test plays (docs/security.md, "Threat model"). Each is a
// user name that a test binds with Grant and acts as with As.
const (
	// Viewer holds Kubernetes' built-in `view` role in one hub namespace.
	Viewer = "attacker-viewer"
	// Tenant holds `edit` in one hub namespace.
	Tenant = "attacker-tenant"
	// SpokeUser holds `edit` in one namespace of one spoke.
	SpokeUser = "attacker-spoke-user"
)

// As returns a copy of cfg that acts as user (with groups, plus system:authenticated) through
// impersonation: the planes' admin credential may impersonate anyone, and the API server then
// authorizes every request as that user, exactly as if they had their own credential.
func As(cfg *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:authenticated"}, groups...)}
	return c
}

// Grant binds clusterRole (for example the built-in "view" or "edit") to user in namespace, which
// must exist. The built-in roles are aggregated by kube-controller-manager, which hub and API-only
// planes do not run, so they hold no rules there: Grant also binds every ClusterRole that
// aggregates into the role (labelled rbac.authorization.k8s.io/aggregate-to-<role>, for edit and
// admin those of the roles they include too), which gives the user exactly the rights the role
// has on a real cluster.
func Grant(t testing.TB, ctx context.Context, c client.Client, namespace, user, clusterRole string) {
	t.Helper()
	roles := []string{clusterRole}
	for _, into := range aggregatesInto[clusterRole] {
		var parts rbacv1.ClusterRoleList
		if err := c.List(ctx, &parts, client.MatchingLabels{"rbac.authorization.k8s.io/aggregate-to-" + into: "true"}); err != nil {
			t.Fatalf("list the ClusterRoles that aggregate into %s: %v", into, err)
		}
		for _, part := range parts.Items {
			roles = append(roles, part.Name)
		}
	}
	for _, role := range roles {
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user + "-" + strings.ReplaceAll(role, ":", "-"), Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("grant %s %q in %s: %v", user, role, namespace, err)
		}
	}
}

// aggregatesInto names, for each built-in role, the roles whose aggregated parts it holds.
var aggregatesInto = map[string][]string{
	"view":  {"view"},
	"edit":  {"edit", "view"},
	"admin": {"admin", "edit", "view"},
}

// NoCanary fails the test when canary appears in anything a reader of the plane could see other
// than Secrets: every listable resource of every group and namespace (statuses, Events,
// ControllerRevisions, Delivery records, ConfigMaps...), and in each of texts (logs, CLI output).
// Secrets are skipped: they are where the value is allowed to be.
func NoCanary(t testing.TB, ctx context.Context, cfg *rest.Config, canary string, texts ...string) {
	t.Helper()
	for i, text := range texts {
		if strings.Contains(text, canary) {
			t.Errorf("the canary appears in text %d: %s", i, around(text, canary))
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{} // listing everything lists deprecated kinds too
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("discovery: %v", err)
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || (gv.Group == "" && r.Name == "secrets") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue // not every listed resource is readable (reviews, metrics); they hold nothing stored
			}
			for _, item := range items.Items {
				data, err := item.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				if s := string(data); strings.Contains(s, canary) {
					t.Errorf("the canary appears in %s %s/%s: %s", r.Name, item.GetNamespace(), item.GetName(), around(s, canary))
				}
			}
		}
	}
}

func hasVerb(verbs []string, verb string) bool {
	for _, v := range verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// around is the text near the canary's first occurrence, to say where it leaked.
func around(s, canary string) string {
	i := strings.Index(s, canary)
	lo, hi := max(0, i-120), min(len(s), i+len(canary)+40)
	return fmt.Sprintf("…%s…", s[lo:hi])
}
