package render_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestSplitKeyUndoesKey(t *testing.T) {
	for _, o := range []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"namespace": "team", "name": "web"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team"}}},
	} {
		group, kind, namespace, name, ok := render.SplitKey(render.Key(o))
		if !ok || group != o.GroupVersionKind().Group || kind != o.GetKind() || namespace != o.GetNamespace() || name != o.GetName() {
			t.Errorf("SplitKey(%q) = %q %q %q %q %v", render.Key(o), group, kind, namespace, name, ok)
		}
	}
	for _, bad := range []string{"", "apps/Deployment/team", "apps//team/web", "apps/Deployment/team/"} {
		if _, _, _, _, ok := render.SplitKey(bad); ok {
			t.Errorf("SplitKey(%q) accepted a malformed key", bad)
		}
	}
}
