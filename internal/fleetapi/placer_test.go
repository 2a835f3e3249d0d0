package fleetapi

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func propagation(name string, names []string, selector map[string]string, deleting bool) flotillav1.APIPropagation {
	p := flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: name}}
	p.Spec.ResourceGraphDefinitions.Names = names
	if selector != nil {
		p.Spec.ResourceGraphDefinitions.LabelSelector = &metav1.LabelSelector{MatchLabels: selector}
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

func TestPlacerOf(t *testing.T) {
	public := map[string]string{"public": "true"}
	cases := []struct {
		name   string
		props  []flotillav1.APIPropagation
		labels map[string]string
		want   string
	}{
		{"none chooses it", []flotillav1.APIPropagation{propagation("a", []string{"other"}, nil, false)}, nil, ""},
		{"by name", []flotillav1.APIPropagation{propagation("a", []string{"web"}, nil, false)}, nil, "a"},
		{"by label", []flotillav1.APIPropagation{propagation("a", nil, public, false)}, public, "a"},
		{"a selector that does not match", []flotillav1.APIPropagation{propagation("a", nil, public, false)}, map[string]string{"public": "no"}, ""},
		{"the name that sorts first wins", []flotillav1.APIPropagation{
			propagation("b", []string{"web"}, nil, false), propagation("a", nil, public, false)}, public, "a"},
		{"a deleted one hands over", []flotillav1.APIPropagation{
			propagation("a", []string{"web"}, nil, true), propagation("b", []string{"web"}, nil, false)}, nil, "b"},
		{"a deleted one alone still holds it, for its removal", []flotillav1.APIPropagation{
			propagation("a", []string{"web"}, nil, true)}, nil, "a"},
		{"a malformed selector chooses nothing", []flotillav1.APIPropagation{{
			ObjectMeta: metav1.ObjectMeta{Name: "a"},
			Spec: flotillav1.APIPropagationSpec{ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}}}}},
			public, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := placerOf(&metav1.ObjectMeta{Name: "web", Labels: c.labels}, c.props)
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != c.want {
				t.Fatalf("placer %q, want %q", name, c.want)
			}
		})
	}
}

func TestPlacementRefProblem(t *testing.T) {
	p := propagation("a", []string{"web"}, nil, false)
	p.Spec.PlacementRef = flotillav1.PlacementRef{Name: "all", Namespace: "flotilla-system"}
	if msg := placementRefProblem(&p, nil); msg != "" {
		t.Fatalf("flotilla-system refused: %s", msg)
	}
	p.Spec.PlacementRef.Namespace = "team"
	if msg := placementRefProblem(&p, nil); msg == "" {
		t.Fatal("a Placement in a team namespace was accepted")
	}
	if msg := placementRefProblem(&p, []string{"team"}); msg != "" {
		t.Fatalf("an admin namespace refused: %s", msg)
	}
}

// An RGD marked kro.run/distribute: "false", as a label or an annotation, is served by none of
// the APIPropagations that choose it; "true" is the default.
func TestPlacerOfHubOnly(t *testing.T) {
	byName := []flotillav1.APIPropagation{propagation("a", []string{"web"}, nil, false)}
	cases := []struct {
		name string
		rgd  metav1.ObjectMeta
		want bool
	}{
		{"label false", metav1.ObjectMeta{Name: "web", Labels: map[string]string{HubOnlyMarker: "false"}}, false},
		{"annotation false", metav1.ObjectMeta{Name: "web", Annotations: map[string]string{HubOnlyMarker: "false"}}, false},
		{"annotation true", metav1.ObjectMeta{Name: "web", Annotations: map[string]string{HubOnlyMarker: "true"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := placerOf(&c.rgd, byName); (got != nil) != c.want {
				t.Fatalf("placer %v, want served: %v", got, c.want)
			}
		})
	}
}
