package spokeclient

import (
	"testing"
	"time"
)

var testLimits = Limits{Initial: 8, Min: 2, Max: 10, SlowFactor: 4, SlowMargin: 50 * time.Millisecond, FloorPeriod: 30 * time.Second}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// step is one response: sent at `at` after t0, answered `took` later.
type step struct {
	at, took time.Duration
	write    bool
	wait     bool
	failed   bool
	idle     bool // less than half the window in use
	repeat   int  // the same response this many times (default 1), each sent 1 ms after the last
}

func (s step) response(i int) response {
	sent := t0.Add(s.at + time.Duration(i)*time.Millisecond)
	return response{sent: sent, answered: sent.Add(s.took), write: s.write, wait: s.wait, failed: s.failed, busy: !s.idle}
}

func TestWindow(t *testing.T) {
	ms := time.Millisecond
	// floor: writes that set a 2 ms latency floor (and average) with the window busy; they
	// also grow it a little.
	floor := step{at: 0, took: 2 * ms, write: true, repeat: 3}
	for _, tc := range []struct {
		name      string
		steps     []step
		wantLimit int
		wantLast  decrease
	}{
		{name: "healthy responses with the window busy grow it by one per window",
			steps: []step{{took: 5 * ms, write: true, repeat: 9}}, wantLimit: 9},
		{name: "healthy responses to an idle window leave it",
			steps: []step{{took: 5 * ms, write: true, idle: true, repeat: 50}}, wantLimit: 8},
		{name: "growth stops at Max",
			steps: []step{{took: 5 * ms, write: true, repeat: 500}}, wantLimit: 10},
		{name: "a 429 halves the window",
			steps: []step{{took: ms, wait: true}}, wantLimit: 4, wantLast: throttled},
		{name: "a 5xx with Retry-After halves it like a 429",
			steps: []step{{took: ms, write: true, wait: true}}, wantLimit: 4, wantLast: throttled},
		{name: "429s to requests sent together halve it once",
			steps: []step{{at: 0, took: 30 * ms, wait: true}, {at: ms, took: 30 * ms, wait: true, repeat: 20}}, wantLimit: 4},
		{name: "a 429 to a request sent after the last decrease halves it again",
			steps: []step{{took: ms, wait: true}, {at: 5 * ms, took: ms, wait: true}}, wantLimit: 2, wantLast: throttled},
		{name: "the window never goes below Min",
			steps: []step{{took: ms, wait: true}, {at: 5 * ms, took: ms, wait: true}, {at: 10 * ms, took: ms, wait: true}}, wantLimit: 2, wantLast: throttled},
		{name: "writes well above the floor shrink the window by a quarter",
			steps: []step{floor, {at: 10 * ms, took: 300 * ms, write: true, repeat: 2}}, wantLimit: 6, wantLast: slow},
		{name: "slow writes sent before the last decrease do not shrink it again",
			steps: []step{floor, {at: 10 * ms, took: 300 * ms, write: true, repeat: 6}}, wantLimit: 6},
		{name: "slow writes sent after the last decrease shrink it again",
			steps: []step{floor, {at: 10 * ms, took: 300 * ms, write: true, repeat: 2}, {at: 400 * ms, took: 300 * ms, write: true}}, wantLimit: 4, wantLast: slow},
		{name: "one slow write among fast ones is the tail, not congestion",
			steps: []step{floor, {at: 10 * ms, took: 300 * ms, write: true}, {at: 20 * ms, took: 2 * ms, write: true, repeat: 5}}, wantLimit: 9},
		{name: "writes slower than the factor but within the margin are healthy",
			steps: []step{floor, {at: 10 * ms, took: 40 * ms, write: true, repeat: 10}}, wantLimit: 9},
		{name: "no growth while writes are slow, whatever reads say",
			steps: []step{floor, {at: 10 * ms, took: 300 * ms, write: true, repeat: 2}, {at: 400 * ms, took: 2 * ms, repeat: 50}}, wantLimit: 6},
		{name: "a slow read is healthy (a big LIST takes long)",
			steps: []step{floor, {at: 10 * ms, took: 900 * ms, repeat: 6}}, wantLimit: 9},
		{name: "without a floor no write is slow",
			steps: []step{{took: 900 * ms, write: true}}, wantLimit: 8},
		{name: "throttled answers do not lower the floor",
			steps: []step{{took: 100 * ms, write: true}, {at: 200 * ms, took: ms, write: true, wait: true}, {at: time.Second, took: 110 * ms, write: true, repeat: 3}}, wantLimit: 4},
		{name: "the floor follows a spoke that stays slower: old samples age out after two periods",
			steps: []step{floor, {at: 61 * time.Second, took: 200 * ms, write: true, repeat: 10}}, wantLimit: 9},
		{name: "within the periods the old floor still counts",
			steps: []step{floor, {at: 31 * time.Second, took: 300 * ms, write: true, repeat: 2}}, wantLimit: 6, wantLast: slow},
		{name: "transport errors and 5xx without Retry-After change nothing",
			steps: []step{{took: ms, failed: true, repeat: 10}, {at: 50 * ms, took: 5 * time.Second, write: true, failed: true}}, wantLimit: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWindow(testLimits)
			var last decrease
			for _, s := range tc.steps {
				for i := range max(s.repeat, 1) {
					last = w.observe(s.response(i))
				}
			}
			if got := w.limit(); got != tc.wantLimit {
				t.Errorf("limit %d, want %d (size %.2f)", got, tc.wantLimit, w.size)
			}
			if last != tc.wantLast {
				t.Errorf("last response: decrease %q, want %q", last, tc.wantLast)
			}
		})
	}
}

func TestRecentMin(t *testing.T) {
	m := recentMin{period: 10 * time.Second}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	if v := m.value(at(0)); v != 0 {
		t.Fatalf("empty floor %s, want 0", v)
	}
	m.add(at(0), 5*time.Millisecond)
	m.add(at(1), 9*time.Millisecond)
	for _, c := range []struct {
		at   int
		add  time.Duration
		want time.Duration
	}{
		{at: 2, want: 5 * time.Millisecond},
		{at: 11, add: 8 * time.Millisecond, want: 5 * time.Millisecond}, // the previous period still counts
		{at: 21, want: 8 * time.Millisecond},                            // 5 ms aged out; 8 ms is the previous period's
		{at: 45, want: 0},                                               // nothing in the last two periods
	} {
		if c.add > 0 {
			m.add(at(c.at), c.add)
		}
		if v := m.value(at(c.at)); v != c.want {
			t.Errorf("at %d s: floor %s, want %s", c.at, v, c.want)
		}
	}
}
