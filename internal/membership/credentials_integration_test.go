package membership_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// flotillaUser is the spoke identity join creates.
const flotillaUser = "system:serviceaccount:" + membership.Namespace + ":" + membership.ServiceAccount

// revocationWait covers the spoke API server's cache of successful token authentications
// (10 s by default).
const revocationWait = 30 * time.Second

// TestCredentialLifecycle checks on a real spoke what join grants and how its tokens live and
// die: bounded lifetime, no escalation, revocation on re-join and unjoin, and objects of join's
// names that someone else made are neither taken over nor removed.
func TestCredentialLifecycle(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("spoke-a"))
	ctx := context.Background()
	hubClient := hubtest.Install(t, fleet)
	spokeCfg := fleet.Plane("spoke-a").RESTConfig()
	admin, err := kubernetes.NewForConfig(spokeCfg)
	if err != nil {
		t.Fatal(err)
	}
	join := func(opts membership.JoinOptions) error {
		opts.Name, opts.Spoke = "eu-1", spokeCfg
		return membership.Join(ctx, hubClient, opts)
	}
	storedToken := func() string {
		t.Helper()
		secret := &corev1.Secret{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.SecretName("eu-1")}, secret); err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["kubeconfig"])
		if err != nil {
			t.Fatal(err)
		}
		return cfg.BearerToken
	}
	review := func(token string) (*authenticationv1.TokenReview, error) {
		return admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	}
	mustAuthenticate := func(token string) *authenticationv1.TokenReview {
		t.Helper()
		r, err := review(token)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Status.Authenticated || r.Status.User.Username != flotillaUser {
			t.Fatalf("token review: authenticated=%t user=%q error=%q", r.Status.Authenticated, r.Status.User.Username, r.Status.Error)
		}
		return r
	}
	waitRevoked := func(token, what string) {
		t.Helper()
		fleettest.Eventually(t, revocationWait, what, func() error {
			r, err := review(token)
			if err != nil {
				return err
			}
			if r.Status.Authenticated {
				return errors.New("the token still authenticates")
			}
			return nil
		})
	}
	allowed := func(attrs authorizationv1.ResourceAttributes) bool {
		t.Helper()
		sar, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: flotillaUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + membership.Namespace, "system:authenticated"},
			ResourceAttributes: &attrs,
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}

	if err := join(membership.JoinOptions{TokenLifetime: time.Hour}); err != nil {
		t.Fatal(err)
	}
	first := storedToken()

	t.Run("the token is a bound TokenRequest token with the lifetime asked for", func(t *testing.T) {
		mustAuthenticate(first)
		claims := decodeClaims(t, first)
		if life := claims.Exp - claims.Iat; life != 3600 {
			t.Errorf("token lifetime %d s, want 3600", life)
		}
		if claims.Kubernetes.Secret == nil || !strings.HasPrefix(claims.Kubernetes.Secret.Name, "flotilla-token-") {
			t.Fatalf("token not bound to a Secret: %+v", claims.Kubernetes)
		}
	})

	t.Run("the default grant cannot escalate, bind or impersonate", func(t *testing.T) {
		for _, a := range []authorizationv1.ResourceAttributes{
			{Verb: "escalate", Group: rbacv1.GroupName, Resource: "clusterroles"},
			{Verb: "bind", Group: rbacv1.GroupName, Resource: "clusterroles"},
			{Verb: "escalate", Group: rbacv1.GroupName, Resource: "roles", Namespace: "default"},
			{Verb: "bind", Group: rbacv1.GroupName, Resource: "roles", Namespace: "default"},
			{Verb: "impersonate", Resource: "users"},
			{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "kube-system"},
			{Verb: "*", Group: "*", Resource: "*"},
		} {
			if allowed(a) {
				t.Errorf("the default grant allows %s %s/%s", a.Verb, a.Group, a.Resource)
			}
		}
		for _, a := range []authorizationv1.ResourceAttributes{
			{Verb: "patch", Resource: "configmaps", Namespace: "team"},
			{Verb: "create", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
			{Verb: "delete", Group: "apps", Resource: "deployments", Namespace: "team"},
			{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterrolebindings"},
		} {
			if !allowed(a) {
				t.Errorf("the default grant does not allow %s %s/%s, which delivery needs", a.Verb, a.Group, a.Resource)
			}
		}
		// So a delivered binding to cluster-admin is refused by the spoke itself.
		asCfg := rest.AnonymousClientConfig(spokeCfg)
		asCfg.BearerToken = first
		asFlotilla, err := kubernetes.NewForConfig(asCfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = asFlotilla.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}},
		}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("Flotilla's credentials created a binding to cluster-admin: %v", err)
		}
	})

	t.Run("joining again revokes the previous token", func(t *testing.T) {
		if err := join(membership.JoinOptions{}); err != nil {
			t.Fatal(err)
		}
		second := storedToken()
		if second == first {
			t.Fatal("re-join stored the same token")
		}
		mustAuthenticate(second)
		waitRevoked(first, "the token of the first join revoked")
		if life := decodeClaims(t, second); life.Exp-life.Iat != int64(membership.DefaultTokenLifetime/time.Second) {
			t.Errorf("default lifetime %d s", life.Exp-life.Iat)
		}
		secrets, err := admin.CoreV1().Secrets(membership.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(secrets.Items) != 1 || secrets.Items[0].Name != decodeClaims(t, second).Kubernetes.Secret.Name {
			t.Fatalf("token Secrets on the spoke after re-join: %d", len(secrets.Items))
		}
	})

	t.Run("--role binds the named ClusterRole instead of flotilla-delivery", func(t *testing.T) {
		if err := join(membership.JoinOptions{Role: "missing"}); err == nil || !strings.Contains(err.Error(), `ClusterRole "missing" named by --role does not exist`) {
			t.Fatalf("join with a missing role: %v", err)
		}
		if err := join(membership.JoinOptions{Role: "view"}); err != nil {
			t.Fatal(err)
		}
		crb, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, membership.ClusterRoleBinding, metav1.GetOptions{})
		if err != nil || crb.RoleRef.Name != "view" {
			t.Fatalf("binding %+v, %v", crb, err)
		}
		if _, err := admin.RbacV1().ClusterRoles().Get(ctx, membership.DeliveryClusterRole, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("flotilla-delivery stays although it is no longer bound: %v", err)
		}
		if allowed(authorizationv1.ResourceAttributes{Verb: "patch", Resource: "configmaps", Namespace: "team"}) {
			t.Error("view grants patch")
		}
		c := &flotillav1.Cluster{}
		if err := hubClient.Get(ctx, client.ObjectKey{Name: "eu-1"}, c); err != nil || c.Annotations[flotillav1.AnnotationSpokeGrant] != "view" {
			t.Fatalf("cluster annotations %v, %v", c.Annotations, err)
		}
		if err := join(membership.JoinOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the ServiceAccount may renew its own token and nothing else of the kind", func(t *testing.T) {
		if !allowed(authorizationv1.ResourceAttributes{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: membership.Namespace, Name: membership.ServiceAccount}) {
			t.Error("cannot request its own token")
		}
	})

	t.Run("unjoin revokes the token", func(t *testing.T) {
		token := storedToken()
		mustAuthenticate(token)
		if err := membership.Unjoin(ctx, hubClient, membership.UnjoinOptions{Name: "eu-1"}); err != nil {
			t.Fatal(err)
		}
		waitRevoked(token, "the token revoked by unjoin")
		if _, err := admin.CoreV1().ServiceAccounts(membership.Namespace).Get(ctx, membership.ServiceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("ServiceAccount still there: %v", err)
		}
		if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, membership.ClusterRoleBinding, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("binding still there: %v", err)
		}
	})

	foreign := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: membership.ClusterRoleBinding, Labels: map[string]string{membership.LabelHub: "another-hub"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: membership.ServiceAccount, Namespace: membership.Namespace}},
	}

	t.Run("join refuses to take over a binding named flotilla that it did not create", func(t *testing.T) {
		created, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, foreign.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = join(membership.JoinOptions{})
		var notOurs *membership.NotOursError
		if !errors.As(err, &notOurs) || notOurs.Kind != "clusterrolebinding" {
			t.Fatalf("join over a foreign binding: %v", err)
		}
		if _, err := admin.CoreV1().ServiceAccounts(membership.Namespace).Get(ctx, membership.ServiceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a refused join created the ServiceAccount: %v", err)
		}
		if err := hubClient.Get(ctx, client.ObjectKey{Name: "eu-1"}, &flotillav1.Cluster{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a refused join created the Cluster: %v", err)
		}
		got, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, membership.ClusterRoleBinding, metav1.GetOptions{})
		if err != nil || got.ResourceVersion != created.ResourceVersion {
			t.Fatalf("the foreign binding was changed: %v", err)
		}
		if err := admin.RbacV1().ClusterRoleBindings().Delete(ctx, membership.ClusterRoleBinding, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("unjoin leaves a binding named flotilla that join did not create", func(t *testing.T) {
		if err := join(membership.JoinOptions{}); err != nil {
			t.Fatal(err)
		}
		token := storedToken()
		// Someone replaces join's binding with their own.
		if err := admin.RbacV1().ClusterRoleBindings().Delete(ctx, membership.ClusterRoleBinding, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		created, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, foreign.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		err = membership.Unjoin(ctx, hubClient, membership.UnjoinOptions{Name: "eu-1", Spoke: spokeCfg, Progress: func(l string) { lines = append(lines, l) }})
		if err != nil {
			t.Fatal(err)
		}
		got, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, membership.ClusterRoleBinding, metav1.GetOptions{})
		if err != nil || got.UID != created.UID {
			t.Fatalf("the foreign binding was removed: %v", err)
		}
		if !strings.Contains(strings.Join(lines, "\n"), "clusterrolebinding flotilla left in place") {
			t.Errorf("unjoin did not say it left the binding:\n%s", strings.Join(lines, "\n"))
		}
		waitRevoked(token, "the token revoked by unjoin")
		for _, check := range []func() error{
			func() error {
				_, err := admin.CoreV1().ServiceAccounts(membership.Namespace).Get(ctx, membership.ServiceAccount, metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := admin.RbacV1().ClusterRoles().Get(ctx, membership.DeliveryClusterRole, metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := admin.RbacV1().Roles(membership.Namespace).Get(ctx, "flotilla-self", metav1.GetOptions{})
				return err
			},
		} {
			if err := check(); !apierrors.IsNotFound(err) {
				t.Errorf("an object join created survived unjoin: %v", err)
			}
		}
		secrets, err := admin.CoreV1().Secrets(membership.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(secrets.Items) != 0 {
			t.Fatalf("token Secrets after unjoin: %v, %v", secrets, err)
		}
	})
}

// claims is the part of a ServiceAccount token's payload the test reads.
type claims struct {
	Iat        int64 `json:"iat"`
	Exp        int64 `json:"exp"`
	Kubernetes struct {
		Secret *struct {
			Name string `json:"name"`
		} `json:"secret"`
	} `json:"kubernetes.io"`
}

func decodeClaims(t *testing.T, token string) claims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatal("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(fmt.Errorf("token payload: %w", err))
	}
	return c
}
