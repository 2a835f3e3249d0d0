package deliver

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// grants is a ClusterGetter that knows each spoke's grant.
type grants struct {
	ClusterGetter
	role string
}

func (g grants) Grant(string) string { return g.role }

func TestExplainForbidden(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	rbac := apierrors.NewForbidden(secrets, "denied", errors.New(`User "system:serviceaccount:flotilla-system:flotilla" cannot create resource "secrets" in API group "" in the namespace "team"`))
	quota := apierrors.NewForbidden(secrets, "denied", errors.New("exceeded quota: q, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1"))
	tests := []struct {
		name     string
		clusters ClusterGetter
		err      error
		want     string // "" means unchanged
	}{
		{"the authorizer's denial, grant known", grants{role: "configmaps-only"}, rbac, "forbidden by the spoke's grant (ClusterRole configmaps-only): secrets \"denied\" is forbidden: User"},
		{"the authorizer's denial, grant unknown", grants{}, rbac, "forbidden by the spoke's grant to Flotilla's credentials: secrets"},
		{"no grant namer", nil, rbac, "forbidden by the spoke's grant to Flotilla's credentials: secrets"},
		{"an admission refusal", grants{role: "configmaps-only"}, quota, ""},
		{"another error", grants{role: "configmaps-only"}, apierrors.NewNotFound(secrets, "x"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &clusterWorker{name: "eu-1", d: &Deliverer{clusters: tt.clusters}}
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
