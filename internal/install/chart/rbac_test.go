package chart

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// TestChartRBAC checks, in the default namespace and another, that every role generated into
// config/rbac/role.yaml (a ClusterRole, and a Role for each namespace a marker names) is rendered
// in the release namespace and bound to the controller's ServiceAccount only, and that no
// binding points at a role the chart does not render: a marker that gains a namespace= fails
// here, not as a forbidden Lease in a user's cluster.
func TestChartRBAC(t *testing.T) {
	for _, ns := range []string{DefaultNamespace, "fleet-ops"} {
		r := render(t, ns, nil)
		type ref struct{ kind, namespace, name string }
		roles := map[ref][]rbacv1.PolicyRule{}
		var bindings []rbacv1.RoleBinding
		for _, o := range r.Objects {
			switch o.GetKind() {
			case "ClusterRole", "Role":
				var role rbacv1.Role // a ClusterRole decodes the same; only kind, metadata and rules matter
				typed(t, o, &role)
				roles[ref{o.GetKind(), role.Namespace, role.Name}] = role.Rules
			case "ClusterRoleBinding", "RoleBinding":
				var b rbacv1.RoleBinding
				typed(t, o, &b)
				bindings = append(bindings, b)
			}
		}
		if rules := roles[ref{"Role", ns, "flotilla-hub"}]; len(rules) == 0 {
			t.Errorf("%s: no Role flotilla-hub in the release namespace (leader election, credentials Secrets)", ns)
		}
		if rules := roles[ref{"ClusterRole", "", "flotilla-hub"}]; len(rules) == 0 {
			t.Errorf("%s: no ClusterRole flotilla-hub", ns)
		}
		bound := map[ref]bool{}
		for _, b := range bindings {
			want := ref{b.RoleRef.Kind, b.Namespace, b.RoleRef.Name}
			if _, ok := roles[want]; !ok {
				t.Errorf("%s: %s %s/%s binds %v, which the chart does not render", ns, b.Kind, b.Namespace, b.Name, want)
			}
			if len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.ServiceAccountKind ||
				b.Subjects[0].Namespace != ns || b.Subjects[0].Name != "flotilla-hub" {
				t.Errorf("%s: %s %s/%s binds %+v, want only ServiceAccount %s/flotilla-hub", ns, b.Kind, b.Namespace, b.Name, b.Subjects, ns)
			}
			bound[want] = true
		}
		for r := range roles {
			if !bound[r] && r.name != "flotilla-metrics-reader" {
				t.Errorf("%s: %s %s/%s is rendered but not bound", ns, r.kind, r.namespace, r.name)
			}
		}
		if bound[ref{"ClusterRole", "", "flotilla-metrics-reader"}] {
			t.Errorf("%s: flotilla-metrics-reader is bound by default; it must be given to scrapers only", ns)
		}
	}
}

// TestChartDeliveryPolicy: the chart's Delivery policy is install.DeliveryPolicy for the
// controller's ServiceAccount in the release namespace and the deliveryWriters, the policy
// `flotilla dev up` installs for its own controller.
func TestChartDeliveryPolicy(t *testing.T) {
	for _, c := range []struct {
		namespace string
		values    map[string]any
		writers   []string
	}{
		{DefaultNamespace, nil, []string{install.DefaultController}},
		{"fleet-ops", set(t, "deliveryWriters={alice,system:serviceaccount:ops:hub}"),
			[]string{"system:serviceaccount:fleet-ops:flotilla-hub", "alice", "system:serviceaccount:ops:hub"}},
	} {
		r := render(t, c.namespace, c.values)
		wantPolicy, wantBinding, err := install.DeliveryPolicy(c.writers...)
		if err != nil {
			t.Fatal(err)
		}
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		typed(t, find(t, r, "ValidatingAdmissionPolicy", install.DeliveryPolicyName), policy)
		typed(t, find(t, r, "ValidatingAdmissionPolicyBinding", install.DeliveryPolicyName), binding)
		policy.Labels, binding.Labels = nil, nil
		if !equality.Semantic.DeepEqual(policy, wantPolicy) {
			t.Errorf("%s: the chart's policy differs from install.DeliveryPolicy(%q):\n%+v\nwant\n%+v", c.namespace, c.writers, policy.Spec, wantPolicy.Spec)
		}
		if !equality.Semantic.DeepEqual(binding, wantBinding) {
			t.Errorf("%s: the chart's policy binding differs from install.DeliveryPolicy's", c.namespace)
		}
	}
}
