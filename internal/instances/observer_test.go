package instances

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// Under the default tenancy an instance's reads stay in its namespace: a list of a namespaced
// child kind across all namespaces is narrowed to it, and anything else outside it is refused,
// saying what and where; served cluster-wide, nothing is changed.
func TestConfineReads(t *testing.T) {
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	clusterRole := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	observer := func(clusterWide bool) *cacheObserver {
		return &cacheObserver{namespace: "team", clusterWide: clusterWide,
			namespaced: map[schema.GroupVersionKind]bool{configMap: true, secret: true},
			externals:  map[schema.GroupVersionKind]bool{secret: true}}
	}
	items := labels.SelectorFromSet(labels.Set{kro.NodeIDLabel: "items"})
	for _, tc := range []struct {
		name          string
		q             kro.Query
		wantNamespace string
		refused       string
	}{
		{name: "own namespace", q: kro.Query{Kind: configMap, Namespace: "team", Name: "a"}, wantNamespace: "team"},
		{name: "a child elsewhere", q: kro.Query{Kind: configMap, Namespace: "payments", Name: "a"},
			refused: `ConfigMap in namespace "payments" not allowed: an instance may read and write only its own namespace "team"`},
		{name: "a forEach's items", q: kro.Query{Kind: configMap, Selector: items}, wantNamespace: "team"},
		{name: "a cluster-scoped child", q: kro.Query{Kind: clusterRole, Name: "admin"},
			refused: "ClusterRole (cluster-scoped on this cluster) not allowed"},
		{name: "an external list everywhere", q: kro.Query{Kind: secret, Selector: items},
			refused: "external reference to Secret in all namespaces not allowed"},
		{name: "an external elsewhere", q: kro.Query{Kind: secret, Namespace: "payments", Name: "ledger"},
			refused: `external reference to Secret in namespace "payments" not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := observer(false).confine(tc.q)
			switch {
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("error %v, want %q", err, tc.refused)
			case tc.refused == "" && (err != nil || got.Namespace != tc.wantNamespace):
				t.Errorf("namespace %q, error %v; want %q", got.Namespace, err, tc.wantNamespace)
			}
			if wide, err := observer(true).confine(tc.q); err != nil || wide.Namespace != tc.q.Namespace {
				t.Errorf("cluster-wide: namespace %q, error %v", wide.Namespace, err)
			}
		})
	}
}
