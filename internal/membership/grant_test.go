package membership

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// discovered is what a spoke's discovery lists, in short: the core group with the
// subresources that lead to acting as someone else, apps, and a group served by a CRD.
func discovered() []*metav1.APIResourceList {
	res := func(names ...string) []metav1.APIResource {
		var out []metav1.APIResource
		for _, n := range names {
			out = append(out, metav1.APIResource{Name: n})
		}
		return out
	}
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: res("pods", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "pods/ephemeralcontainers",
			"pods/status", "pods/log", "pods/eviction", "pods/binding", "serviceaccounts", "serviceaccounts/token", "nodes", "nodes/proxy", "nodes/status",
			"services", "services/proxy", "configmaps", "secrets", "bindings", "namespaces", "namespaces/finalize", "namespaces/status")},
		{GroupVersion: "apps/v1", APIResources: res("deployments", "deployments/status", "deployments/scale", "statefulsets")},
		{GroupVersion: "authentication.k8s.io/v1", APIResources: res("tokenreviews", "selfsubjectreviews")},
		{GroupVersion: "certificates.k8s.io/v1", APIResources: res("certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status")},
		{GroupVersion: "example.com/v1", APIResources: res("widgets", "widgets/status")},
	}
}

func TestDeliveryRulesNameWhatTheyAllow(t *testing.T) {
	rules, err := deliveryRules(discovered(), []string{"kro.run"})
	if err != nil {
		t.Fatal(err)
	}
	allows := func(group, resource string) bool {
		for _, r := range rules {
			if (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
				(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) {
				return true
			}
		}
		return false
	}
	for _, gr := range [][2]string{{"", "pods"}, {"", "pods/status"}, {"", "configmaps"}, {"", "serviceaccounts"}, {"", "nodes"},
		{"apps", "deployments"}, {"apps", "deployments/scale"}, {"apps", "daemonsets"}, {"example.com", "widgets"}, {"example.com", "gadgets"},
		{"kro.run", "webapps"}, {"certificates.k8s.io", "certificatesigningrequests"}} {
		if !allows(gr[0], gr[1]) {
			t.Errorf("the grant does not allow %s in group %q", gr[1], gr[0])
		}
	}
	for _, gr := range [][2]string{{"", "pods/exec"}, {"", "pods/attach"}, {"", "pods/portforward"}, {"", "pods/proxy"}, {"", "pods/ephemeralcontainers"},
		{"", "pods/log"}, {"", "pods/eviction"}, {"", "pods/binding"}, {"", "bindings"}, {"", "serviceaccounts/token"}, {"", "nodes/proxy"},
		{"", "services/proxy"}, {"", "namespaces/finalize"}, {"authentication.k8s.io", "tokenreviews"},
		{"certificates.k8s.io", "certificatesigningrequests/approval"}, {"other.io", "things"}} {
		if allows(gr[0], gr[1]) {
			t.Errorf("the grant allows %s in group %q", gr[1], gr[0])
		}
	}
	for _, r := range rules {
		for _, v := range r.Verbs {
			if v == "*" || v == "escalate" || v == "bind" || v == "impersonate" || v == "approve" || v == "sign" {
				t.Errorf("rule %+v grants %q", r, v)
			}
		}
		if slices.Contains(r.APIGroups, "*") || slices.Contains(r.NonResourceURLs, "*") {
			t.Errorf("rule %+v uses a wildcard group or URL", r)
		}
		if len(r.NonResourceURLs) > 0 && !slices.Equal(r.Verbs, []string{"get"}) {
			t.Errorf("non-resource rule %+v grants more than get", r)
		}
	}
}

func TestDeliveryRulesRefuseWideningAGroup(t *testing.T) {
	for _, g := range []string{"", "*", "certificates.k8s.io", "Not_A_Group"} {
		if _, err := deliveryRules(discovered(), []string{g}); err == nil {
			t.Errorf("granting group %q whole was accepted", g)
		}
	}
	if _, err := deliveryRules(discovered(), []string{"apps", "example.com", "new.example.org"}); err != nil {
		t.Errorf("granting groups with status and scale only: %v", err)
	}
}

func TestSelfAccessImpersonatesOnlyWithinItsNamespace(t *testing.T) {
	for _, r := range selfAccessRules() {
		if slices.Contains(r.Verbs, "impersonate") && !slices.Equal(r.Resources, []string{"serviceaccounts"}) {
			t.Errorf("rule %+v impersonates more than ServiceAccounts of the Role's namespace", r)
		}
	}
}

func TestValidateTokenLifetime(t *testing.T) {
	tests := []struct {
		d  time.Duration
		ok bool
	}{
		{0, true}, // the default
		{10 * time.Minute, true},
		{24 * time.Hour, true},
		{7 * 24 * time.Hour, true},
		{9 * time.Minute, false},
		{7*24*time.Hour + time.Second, false},
		{365 * 24 * time.Hour, false},
		{-time.Hour, false},
		{time.Hour + time.Millisecond, false},
	}
	for _, tt := range tests {
		if err := ValidateTokenLifetime(tt.d); (err == nil) != tt.ok {
			t.Errorf("ValidateTokenLifetime(%s) = %v, want ok=%t", tt.d, err, tt.ok)
		}
	}
}

func TestValidateRole(t *testing.T) {
	for role, ok := range map[string]bool{"": true, "cluster-admin": true, "system:aggregate-to-view": true, "a/b": false, "..": false, "x%y": false} {
		if err := ValidateRole(role); (err == nil) != ok {
			t.Errorf("ValidateRole(%q) = %v, want ok=%t", role, err, ok)
		}
	}
}
