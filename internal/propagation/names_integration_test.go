package propagation_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// TestBadNamesAreRefused proves that a manifest document whose name would change the API path
// of the request built from it ("../x", "a/b", "%2e%2e") is refused on its owner, condition
// and Event, while the other documents of the same manifest are delivered; and that no request
// reached the spoke for it (its audit log).
func TestBadNamesAreRefused(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	doc := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  x: \"v\"\n"
	}
	e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "names", Namespace: "team"}, Data: map[string]string{
		"traversal.yaml": doc(`"../../kube-system/configmaps/x"`),
		"slash.yaml":     doc(`"a/b"`),
		"escaped.yaml":   doc(`"%2e%2e"`),
		"good-1.yaml":    doc("sibling-1"),
		"good-2.yaml":    doc("sibling-2"),
	}})
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "names", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
			Manifests: []flotillav1.ManifestSource{{Kind: "ConfigMap", Name: "names"}}}})

	p := e.propagationCondition(t, "names", flotillav1.ReasonApplyFailed, `name "a/b"`)
	for _, name := range []string{"sibling-1", "sibling-2"} {
		e.onSpoke(t, "spoke-a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}, false, nil)
	}
	msg := ""
	for _, c := range p.Status.Conditions {
		if c.Type == flotillav1.PropagationApplied {
			msg = c.Message
		}
	}
	for _, want := range []string{`name "%2e%2e"`, `name "../../kube-system/configmaps/x"`, "not delivered"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the condition %q does not say %q", msg, want)
		}
	}
	e.hubEvent(t, "names", flotillav1.ReasonApplyFailed, `name "a/b"`)
	if n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool {
		return ev.ObjectRef.Resource == "configmaps" && !strings.HasPrefix(ev.ObjectRef.Name, "sibling-") && ev.ObjectRef.Namespace != "flotilla-system"
	}); n != 0 {
		t.Errorf("Flotilla made %d requests for the refused documents", n)
	}
	if n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Namespace == "kube-system" }); n != 0 {
		t.Errorf("Flotilla wrote %d times in kube-system", n)
	}
}
