package deliver

import "testing"

func TestOverBudget(t *testing.T) {
	cases := []struct {
		name         string
		budget       int
		confirmed    bool
		stale, owned int
		want         bool
	}{
		{"within the budget", 50, false, 2, 10, false},
		{"over the budget", 50, false, 6, 10, true},
		{"all of them, whatever the budget", 100, false, 10, 10, true},
		{"budget 0: even one deletion waits", 0, false, 1, 10, true},
		{"budget 0, confirmed", 0, true, 1, 10, false},
		{"over, confirmed for this revision", 50, true, 10, 10, false},
		{"a removal the caller decided", Unbudgeted, false, 10, 10, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := Job{PruneBudget: c.budget, Revision: "r2"}
			if c.confirmed {
				job.PruneConfirmed = "r2"
			}
			if got := overBudget(job, c.stale, c.owned); got != c.want {
				t.Errorf("overBudget = %v, want %v", got, c.want)
			}
		})
	}
}
