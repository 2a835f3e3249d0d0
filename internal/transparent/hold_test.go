package transparent

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestHoldReason(t *testing.T) {
	placement := func(generation, observed int64) *flotillav1.Placement {
		return &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Generation: generation},
			Status: flotillav1.PlacementStatus{ObservedGeneration: observed}}
	}
	cases := []struct {
		name          string
		p             *flotillav1.Placement
		decisions, on []string
		confirmed     string
		hold          bool
	}{
		{"a cluster dropped, others chosen", placement(2, 2), []string{"a"}, []string{"a", "b"}, "", false},
		{"chooses nothing while delivered", placement(2, 2), nil, []string{"a", "b"}, "", true},
		{"chooses nothing, confirmed", placement(2, 2), nil, []string{"a", "b"}, "everywhere", false},
		{"chooses nothing, nothing delivered", placement(2, 2), nil, nil, "", false},
		{"status behind the spec: not decided yet", placement(3, 2), []string{"a"}, []string{"a", "b"}, "", true},
		{"a Placement created again, no status yet", placement(1, 0), nil, []string{"a"}, "everywhere", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := holdReason(c.p, c.decisions, c.on, c.confirmed, "kubectl annotate ..."); (got != "") != c.hold {
				t.Errorf("holdReason = %q, want hold=%v", got, c.hold)
			}
		})
	}
}

func TestUnlabelledHold(t *testing.T) {
	cases := []struct {
		name      string
		on        []string
		confirmed string
		hold      bool
	}{
		{"delivered to two clusters", []string{"a", "b"}, "", true},
		{"delivered, confirmed", []string{"a", "b"}, "everywhere", false},
		{"delivered, another change's confirmation", []string{"a"}, "abc123-everywhere", true},
		{"delivered nowhere", nil, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := unlabelledHold(c.on, c.confirmed, "kubectl annotate ..."); (got != "") != c.hold {
				t.Errorf("unlabelledHold = %q, want hold=%v", got, c.hold)
			}
		})
	}
}

func TestConfirmCommandIsPasteable(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("shop")
	u.SetName("cart")
	want := "kubectl annotate --overwrite -n shop deployment.apps cart flotilla.dev/confirm-prune=everywhere"
	if got := confirmCommand(u); got != want {
		t.Errorf("confirmCommand = %q, want %q", got, want)
	}
}
