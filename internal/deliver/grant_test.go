package deliver

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// grant names the same ClusterRole for every spoke.
func grant(role string) func(string) string { return func(string) string { return role } }

func TestExplainForbidden(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	rbac := apierrors.NewForbidden(secrets, "denied", errors.New(`User "system:serviceaccount:flotilla-system:flotilla" cannot create resource "secrets" in API group "" in the namespace "team"`))
	quota := apierrors.NewForbidden(secrets, "denied", errors.New("exceeded quota: q, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1"))
	tests := []struct {
		name  string
		grant func(string) string
		err   error
		want  string // "" means unchanged
	}{
		{"the authorizer's denial, grant known", grant("configmaps-only"), rbac, "forbidden by the spoke's grant (ClusterRole configmaps-only): secrets \"denied\" is forbidden: User"},
		{"the authorizer's denial, grant unknown", grant(""), rbac, "forbidden by the spoke's grant to Flotilla's credentials: secrets"},
		{"no grant known", nil, rbac, "forbidden by the spoke's grant to Flotilla's credentials: secrets"},
		{"an admission refusal", grant("configmaps-only"), quota, ""},
		{"another error", grant("configmaps-only"), apierrors.NewNotFound(secrets, "x"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &clusterWorker{name: "eu-1", d: &Deliverer{opts: Options{Grant: tt.grant}}}
			got := w.explainForbidden(tt.err)
			if tt.want == "" {
				if got != tt.err {
					t.Fatalf("explainForbidden changed %v into %v", tt.err, got)
				}
				return
			}
			if !strings.HasPrefix(got.Error(), tt.want) || !apierrors.IsForbidden(got) {
				t.Fatalf("explainForbidden = %v; want prefix %q, still Forbidden", got, tt.want)
			}
		})
	}
}
