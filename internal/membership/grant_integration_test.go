package membership_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// The default grant is least privilege for real: the spoke's own authorizer, asked through
// SubjectAccessReviews and `kubectl auth can-i`, refuses Flotilla every subresource that acts
// as someone else or inside a workload (the road from `create` on */* to cluster-admin went
// through serviceaccounts/token), and allows what delivery does. The stored credential itself
// cannot mint a token for a kube-system ServiceAccount. It can act as a namespace's identity,
// and that identity only in the namespace a RoleBinding it may write there names.
func TestJoinGrantIsLeastPrivilege(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("spoke-a"))
	ctx := context.Background()
	hubClient := hubtest.Install(t, fleet)
	spoke := fleet.Plane("spoke-a")
	if err := membership.Join(ctx, hubClient, membership.JoinOptions{Name: "eu-1", Spoke: spoke.RESTConfig()}); err != nil {
		t.Fatal(err)
	}
	admin, err := kubernetes.NewForConfig(spoke.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team", "other"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	allowed := func(user string, a authorizationv1.ResourceAttributes) bool {
		t.Helper()
		r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + membership.Namespace, "system:authenticated"}, ResourceAttributes: &a}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	type attrs = authorizationv1.ResourceAttributes
	for _, a := range []attrs{
		{Namespace: "kube-system", Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "bootstrap-signer"},
		{Namespace: "team", Verb: "create", Resource: "pods", Subresource: "exec"},
		{Namespace: "team", Verb: "get", Resource: "pods", Subresource: "exec"},
		{Namespace: "team", Verb: "create", Resource: "pods", Subresource: "attach"},
		{Namespace: "team", Verb: "create", Resource: "pods", Subresource: "portforward"},
		{Namespace: "team", Verb: "get", Resource: "pods", Subresource: "proxy"},
		{Namespace: "team", Verb: "patch", Resource: "pods", Subresource: "ephemeralcontainers"},
		{Namespace: "team", Verb: "get", Resource: "pods", Subresource: "log"},
		{Namespace: "team", Verb: "create", Resource: "pods", Subresource: "binding"},
		{Namespace: "team", Verb: "get", Resource: "services", Subresource: "proxy"},
		{Verb: "get", Resource: "nodes", Subresource: "proxy"},
		{Namespace: "team", Verb: "create", Resource: "bindings"},
		{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"},
		{Verb: "update", Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval"},
		{Verb: "escalate", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "impersonate", Resource: "users", Name: "admin"},
		{Verb: "impersonate", Resource: "groups", Name: "system:masters"},
		{Namespace: "kube-system", Verb: "impersonate", Resource: "serviceaccounts", Name: "default"},
	} {
		if allowed(flotillaUser, a) {
			t.Errorf("Flotilla may %s %s/%s in %q on a joined spoke", a.Verb, a.Resource, a.Subresource, a.Namespace)
		}
	}
	for _, a := range []attrs{
		{Namespace: "team", Verb: "create", Resource: "configmaps"},
		{Namespace: "team", Verb: "patch", Resource: "secrets"},
		{Namespace: "team", Verb: "delete", Group: "apps", Resource: "deployments"},
		{Namespace: "team", Verb: "patch", Group: "apps", Resource: "deployments", Subresource: "scale"},
		{Namespace: "team", Verb: "create", Resource: "pods"},
		{Verb: "watch", Resource: "nodes"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "create", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
		{Namespace: "team", Verb: "patch", Group: "kro.run", Resource: "webapps", Subresource: "status"},
		{Namespace: membership.Namespace, Verb: "impersonate", Resource: "serviceaccounts", Name: membership.NamespaceServiceAccount("team")},
	} {
		if !allowed(flotillaUser, a) {
			t.Errorf("Flotilla may not %s %s/%s in %q on a joined spoke", a.Verb, a.Resource, a.Subresource, a.Namespace)
		}
	}

	// kubectl agrees.
	for args, want := range map[string]string{
		"create serviceaccounts --subresource=token -n kube-system": "no",
		"create pods --subresource=exec -n team":                    "no",
		"get nodes --subresource=proxy":                             "no",
		"impersonate users":                                         "no",
		"create configmaps -n team":                                 "yes",
	} {
		cmd := exec.Command(fleettest.KubectlPath(t), append([]string{"--kubeconfig", spoke.KubeconfigPath(), "auth", "can-i", "--as", flotillaUser}, strings.Fields(args)...)...)
		out, _ := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n") // after any warning
		if got := lines[len(lines)-1]; got != want {
			t.Errorf("kubectl auth can-i %s as Flotilla: %q, want %q", args, got, want)
		}
	}

	// With the credential the hub stores, as a thief of it would.
	stored := storedConfig(ctx, t, hubClient, "eu-1")
	asFlotilla, err := kubernetes.NewForConfig(stored)
	if err != nil {
		t.Fatal(err)
	}
	_, err = asFlotilla.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "bootstrap-signer",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the stored credential requesting a token for kube-system/bootstrap-signer: %v; want Forbidden", err)
	}
	// The per-namespace identity, as the deliverer sets it up with this credential.
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: membership.NamespaceRoleBinding, Namespace: "team", Labels: membership.NamespaceIdentityLabels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: membership.DeliveryClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: membership.Namespace, Name: membership.NamespaceServiceAccount("team")}}}
	if _, err := asFlotilla.RbacV1().RoleBindings("team").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Flotilla cannot grant the identity of namespace team its grant there: %v", err)
	}
	impersonating := func(user string) kubernetes.Interface {
		cfg := rest.CopyConfig(stored)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	tenant := impersonating(membership.NamespaceUser("team"))
	cm := func(ns string) error {
		_, err := tenant.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "direct"}}, metav1.CreateOptions{})
		return err
	}
	// The spoke's authorizer learns of the new binding within moments.
	fleettest.Eventually(t, 10*time.Second, "the identity of namespace team writing there", func() error { return cm("team") })
	if err := cm("other"); !apierrors.IsForbidden(err) {
		t.Errorf("the identity of namespace team writing in namespace other: %v; want Forbidden", err)
	}
	_, err = impersonating("system:serviceaccount:kube-system:default").CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the stored credential impersonating kube-system/default: %v; want Forbidden", err)
	}
	// Unjoin, with the stored credential, removes the identity's RoleBinding.
	if err := membership.Unjoin(ctx, hubClient, membership.UnjoinOptions{Name: "eu-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("team").Get(ctx, membership.NamespaceRoleBinding, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the namespace identity's rolebinding after unjoin: %v; want NotFound", err)
	}
}

// storedConfig is the spoke connection the hub stores for cluster.
func storedConfig(ctx context.Context, t *testing.T, hub client.Client, cluster string) *rest.Config {
	t.Helper()
	secret := &corev1.Secret{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.SecretName(cluster)}, secret); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	return cfg

}
