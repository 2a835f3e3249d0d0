package propagation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestFleetBudget(t *testing.T) {
	p := fromPropagation(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}})
	cases := []struct {
		name    string
		leaving []string
		touched int
		budget  int
		held    bool
	}{
		{"one of three clusters leaves", []string{"a"}, 3, 50, false},
		{"shrinking from three clusters to one", []string{"a", "b"}, 3, 50, true},
		{"a move from one cluster to another", []string{"a"}, 2, 50, false},
		{"ten clusters to one", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, 10, 50, true},
		{"budget 0: any cluster leaving waits", []string{"a"}, 10, 0, true},
		{"nothing leaves", nil, 3, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := fleetBudget(p, c.leaving, c.touched, c.budget, "")
			if (msg != "") != c.held {
				t.Fatalf("fleetBudget = %q, want held=%v", msg, c.held)
			}
			if !c.held {
				return
			}
			token := msg[strings.LastIndex(msg, "=")+1:]
			if again := fleetBudget(p, c.leaving, c.touched, c.budget, token); again != "" {
				t.Errorf("confirmed with %q and still held: %s", token, again)
			}
			if other := fleetBudget(p, append([]string{"z"}, c.leaving...), c.touched+1, c.budget, token); other == "" {
				t.Errorf("a confirmation of one removal lifted another")
			}
		})
	}
}
