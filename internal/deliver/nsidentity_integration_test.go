package deliver_test

import (
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Spoke RBAC stands behind tenancy: a namespaced owner's objects are written as the identity
// of its namespace, which the spoke lets act in that namespace only. The spoke's audit log
// shows who made each write; the RoleBinding behind the identity is written once, not per
// delivery; and the identity itself, used directly, is refused everywhere else.
func TestNamespacedOwnerWritesAsItsNamespaceIdentity(t *testing.T) {
	ctx, spoke, admin := oneSpoke(t, true, "other")

	// A cluster imported with admin credentials (no join grant): Flotilla writes the
	// identities' ClusterRole itself. The namespace "team" does not exist yet.
	d := deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})
	if err := d.Engage(ctx, "a", startSpoke(ctx, t, spoke)); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	job := func(objs ...*unstructured.Unstructured) deliver.Job {
		return deliver.Job{Owner: owner, Cluster: "a", Objects: objs, Revision: render.Revision(objs)}
	}
	delivered := func(revision string) func() error {
		return func() error {
			if r, ok := d.Result(owner, "a"); !ok || !r.Complete || r.Revision != revision {
				return fmt.Errorf("not delivered completely yet: %+v", r)
			}
			return nil
		}
	}
	first := job(rendered(t, owner, "team", "web-1"))
	d.Submit(first)
	fleettest.Eventually(t, 30*time.Second, "the first object delivered", delivered(first.Revision))
	second := job(rendered(t, owner, "team", "web-1"), rendered(t, owner, "team", "web-2"))
	d.Submit(second)
	fleettest.Eventually(t, 30*time.Second, "the second object delivered", delivered(second.Revision))

	identity := membership.NamespaceUser("team")
	applied, bindingWrites := map[string]string{}, 0
	for _, e := range auditEvents(t, spoke) {
		if !e.Mutating() {
			continue
		}
		if e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Namespace == "team" {
			as := e.User.Username
			if e.ImpersonatedUser != nil {
				as = e.ImpersonatedUser.Username
			}
			applied[e.ObjectRef.Name] = as
			if as != identity {
				t.Errorf("%s %s was written as %q, not as the namespace's identity %q", e.Verb, e.RequestURI, as, identity)
			}
		}
		if e.ObjectRef.Resource == "rolebindings" && e.ResponseStatus.Code < 300 {
			bindingWrites++
		}
	}
	if len(applied) != 2 {
		t.Errorf("writes of the owner's ConfigMaps in the audit log: %v; want web-1 and web-2", applied)
	}
	if bindingWrites != 1 {
		t.Errorf("%d writes of RoleBindings for two deliveries into one namespace; want 1", bindingWrites)
	}

	// The identity, used directly: what it may do in its namespace, it may not do elsewhere.
	as, err := client.New(fleettest.As(spoke.RESTConfig(), identity, "system:serviceaccounts", "system:serviceaccounts:"+membership.Namespace), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cm := func(ns string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct"}}
	}
	if err := as.Create(ctx, cm("team")); err != nil {
		t.Fatalf("the identity of namespace team cannot write there: %v", err)
	}
	refused := map[string]client.Object{
		"a ConfigMap in another namespace": cm("other"),
		"a ConfigMap in kube-system":       cm("kube-system"),
		"a Namespace":                      &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "direct"}},
		"a ClusterRoleBinding": &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "direct"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}},
	}
	for what, obj := range refused {
		if err := as.Create(ctx, obj); !apierrors.IsForbidden(err) {
			t.Errorf("the identity of namespace team creating %s: %v; want Forbidden", what, err)
		}
	}

	// A spoke user holding edit in the namespace may impersonate its ServiceAccounts (edit's
	// rule, granted here as a Role: this plane runs no controller to aggregate edit), but not
	// the namespace's identity, which is a ServiceAccount name of Flotilla's namespace.
	if err := admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "edit-impersonation"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "edit-impersonation"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "edit-impersonation"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: fleettest.SpokeUser}}}); err != nil {
		t.Fatal(err)
	}
	mayImpersonate := func(ns string) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: fleettest.SpokeUser,
			Groups: []string{"system:authenticated"}, ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: "impersonate", Resource: "serviceaccounts", Name: membership.NamespaceServiceAccount("team")}}}
		err := admin.Create(ctx, sar)
		return sar.Status.Allowed, err
	}
	// The spoke's authorizer learns of the new binding within moments.
	fleettest.Eventually(t, 10*time.Second, "the spoke user impersonating a ServiceAccount of team", func() error {
		if ok, err := mayImpersonate("team"); err != nil || !ok {
			return fmt.Errorf("allowed %t: %v", ok, err)
		}
		return nil
	})
	if ok, err := mayImpersonate(membership.Namespace); err != nil || ok {
		t.Errorf("a spoke user with edit in team may impersonate %s/%s: %t (%v)", membership.Namespace, membership.NamespaceServiceAccount("team"), ok, err)
	}
}
