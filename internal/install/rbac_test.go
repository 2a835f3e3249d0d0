package install_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// TestRBACIsBound checks that every role generated into config/rbac/role.yaml (a ClusterRole,
// and a Role for each namespace a marker names) is bound to the hub controller's
// ServiceAccount by config/rbac/role_binding.yaml, in the role's namespace, and that no binding
// points at a role that is not generated: a marker that gains a namespace= then fails here, not
// as a forbidden Lease in a user's cluster.
func TestRBACIsBound(t *testing.T) {
	dir := filepath.Join("..", "..", "config", "rbac")
	type ref struct{ kind, namespace, name string }
	roles := map[ref]bool{}
	for _, doc := range documents(t, filepath.Join(dir, "role.yaml")) {
		var r rbacv1.Role // a ClusterRole decodes the same; only kind, metadata and rules matter
		decode(t, doc, &r)
		if len(r.Rules) == 0 {
			t.Errorf("%s %s/%s has no rules", r.Kind, r.Namespace, r.Name)
		}
		roles[ref{r.Kind, r.Namespace, r.Name}] = true
	}
	bound := map[ref]bool{}
	for _, doc := range documents(t, filepath.Join(dir, "role_binding.yaml")) {
		var b rbacv1.RoleBinding // likewise for a ClusterRoleBinding
		decode(t, doc, &b)
		want := ref{b.RoleRef.Kind, b.Namespace, b.RoleRef.Name}
		if b.Kind == "ClusterRoleBinding" && b.RoleRef.Kind == "ClusterRole" {
			want.namespace = ""
		}
		if !roles[want] {
			t.Errorf("%s %s/%s binds %s %s/%s, which role.yaml does not generate", b.Kind, b.Namespace, b.Name, want.kind, want.namespace, want.name)
		}
		if len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.ServiceAccountKind ||
			b.Subjects[0].Namespace != "flotilla-system" || b.Subjects[0].Name != "flotilla-hub" {
			t.Errorf("%s %s/%s binds %+v, want only ServiceAccount flotilla-system/flotilla-hub", b.Kind, b.Namespace, b.Name, b.Subjects)
		}
		bound[want] = true
	}
	if len(roles) < 2 {
		t.Errorf("role.yaml generates %d roles; want the ClusterRole and the leader-election Role", len(roles))
	}
	for r := range roles {
		if !bound[r] {
			t.Errorf("%s %s/%s is generated but not bound in role_binding.yaml", r.kind, r.namespace, r.name)
		}
	}
}

func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			out = append(out, doc)
		}
	}
}

func decode(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
}
