package decide

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestOverBudget(t *testing.T) {
	cases := []struct {
		name         string
		budget       int
		confirmed    string
		stale, owned int
		want         bool
	}{
		{"within the budget", 50, "", 2, 10, false},
		{"exactly the budget", 50, "", 5, 10, false},
		{"over the budget", 50, "", 6, 10, true},
		{"all of them, whatever the budget", 100, "", 10, 10, true},
		{"the only one, whatever the budget", 100, "", 1, 1, true},
		{"budget 0: even one deletion waits", 0, "", 1, 10, true},
		{"budget 0, confirmed", 0, "r2", 1, 10, false},
		{"over, confirmed for this revision", 50, "r2", 10, 10, false},
		{"over, confirmed for an earlier revision", 50, "r1", 10, 10, true},
		{"a removal the caller decided", Unbudgeted, "", 10, 10, false},
		{"nothing to delete", 0, "", 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Strategy{PruneBudget: c.budget, PruneConfirmed: c.confirmed}
			if got := OverBudget(s, "r2", c.stale, c.owned); got != c.want {
				t.Errorf("OverBudget = %v, want %v", got, c.want)
			}
		})
	}
}

func TestKept(t *testing.T) {
	protected := func(value string) map[string]string {
		return map[string]string{flotillav1.LabelOwner: tenant.LabelValue(), flotillav1.LabelProtected: value}
	}
	cases := []struct {
		name     string
		labels   map[string]string
		deletion flotillav1.DeletionPolicy
		kept     bool
	}{
		{"deleted by default", map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, "", false},
		{"deleted under Delete", map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, flotillav1.DeletionDelete, false},
		{"protected", protected("true"), "", true},
		{"protected only by the value true", protected("yes"), "", false},
		{"orphaned", map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, flotillav1.DeletionOrphan, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why := Kept(object(c.labels, nil), Strategy{Deletion: c.deletion})
			if (why != "") != c.kept {
				t.Errorf("Kept = %q, want kept=%v", why, c.kept)
			}
		})
	}
}
