package spokeclient

import "time"

// Limits bound a spoke's in-flight window and say when its writes are slow.
type Limits struct {
	// Initial is the window before the spoke has answered anything.
	Initial int
	// Min and Max bound the window.
	Min, Max int
	// Writes are slow when their recent latency (a moving average, weighing each new write by
	// 1/8) exceeds both SlowFactor times the floor (the lowest write latency of the last one
	// to two FloorPeriods) and the floor plus SlowMargin. The average keeps the tail of a busy
	// but healthy spoke from counting; the margin keeps a spoke that answers in a millisecond
	// from counting 10 ms as congestion.
	SlowFactor  float64
	SlowMargin  time.Duration
	FloorPeriod time.Duration
}

// DefaultLimits are the limits of every spoke. Initial matches one delivery's parallel applies;
// Max leaves room for several deliveries at once on a spoke far away, where round trips and not
// the server bound throughput; the server's APF still decides what it serves. SlowMargin is a
// quarter of the API call latency SLO (1 s for writes): a spoke whose writes take that much
// longer than they can is queueing them, and Flotilla backs off well before the SLO is at risk.
var DefaultLimits = Limits{Initial: 16, Min: 2, Max: 64, SlowFactor: 4, SlowMargin: 250 * time.Millisecond, FloorPeriod: 30 * time.Second}

// recentWeight is the weight of each new write in the moving average of write latency.
const recentWeight = 1.0 / 8

// response is what the window learns from one answered request.
type response struct {
	sent, answered time.Time
	// write is a mutating request: only writes, similar in cost, feed the latency floor and
	// the slow signal (a LIST of thousands of objects is slow and healthy).
	write bool
	// wait is a response the server asked the client to wait on: 429, or a 5xx with Retry-After.
	wait bool
	// failed is a transport error or another 5xx: no signal either way.
	failed bool
	// busy is whether at least half the window was in use when the response came.
	busy bool
}

// decrease says why a response shrank the window.
type decrease string

const (
	noDecrease decrease = ""
	// throttled: the server asked the client to wait (APF queues full, or the server overloaded).
	throttled decrease = "throttled"
	// slow: writes take well above the recent floor.
	slow decrease = "latency"
)

// window is the additive-increase, multiplicative-decrease controller of a spoke's in-flight
// bound. It is pure: the caller passes the times, so tests need no clock.
type window struct {
	limits       Limits
	size         float64
	floor        recentMin
	recent       time.Duration // moving average of write latency; 0 before the first write
	lastDecrease time.Time
}

func newWindow(l Limits) *window {
	return &window{limits: l, size: float64(l.Initial), floor: recentMin{period: l.FloorPeriod}}
}

// limit is the number of requests the window lets in flight.
func (w *window) limit() int { return int(w.size) }

// observe updates the window with one response and says whether, and why, it shrank.
func (w *window) observe(r response) decrease {
	latency := r.answered.Sub(r.sent)
	floor := w.floor.value(r.answered)
	measured := r.write && !r.wait && !r.failed
	if measured {
		w.floor.add(r.answered, latency)
		if w.recent == 0 {
			w.recent = latency
		} else {
			w.recent += time.Duration(recentWeight * float64(latency-w.recent))
		}
	}
	slowNow := floor > 0 && float64(w.recent) > w.limits.SlowFactor*float64(floor) && w.recent > floor+w.limits.SlowMargin
	switch {
	case r.wait:
		return w.shrink(r, 0.5, throttled)
	case r.failed:
		return noDecrease
	case slowNow && measured:
		return w.shrink(r, 0.75, slow)
	case slowNow:
		return noDecrease // no growth while writes are slow, whatever reads say
	case r.busy:
		w.size = min(w.size+1/w.size, float64(w.limits.Max))
	}
	return noDecrease
}

// shrink multiplies the window by factor, once per round trip: a response to a request sent
// before the last decrease belongs to the round trip that caused it.
func (w *window) shrink(r response, factor float64, why decrease) decrease {
	if !r.sent.After(w.lastDecrease) {
		return noDecrease
	}
	w.lastDecrease = r.answered
	w.size = max(w.size*factor, float64(w.limits.Min))
	return why
}

// recentMin is the lowest duration added in the current period or the one before it: a floor
// that follows the spoke when its latency moves for good (a bigger object, a busier machine),
// within two periods.
type recentMin struct {
	period    time.Duration
	start     time.Time
	cur, prev time.Duration // 0: nothing added
}

func (m *recentMin) rotate(now time.Time) {
	switch elapsed := now.Sub(m.start); {
	case elapsed >= 2*m.period:
		m.start, m.cur, m.prev = now, 0, 0
	case elapsed >= m.period:
		m.start, m.cur, m.prev = m.start.Add(m.period), 0, m.cur
	}
}

func (m *recentMin) add(now time.Time, d time.Duration) {
	m.rotate(now)
	if d > 0 && (m.cur == 0 || d < m.cur) {
		m.cur = d
	}
}

// value is the floor at now, 0 when nothing was added in the last two periods.
func (m *recentMin) value(now time.Time) time.Duration {
	m.rotate(now)
	switch {
	case m.cur == 0:
		return m.prev
	case m.prev == 0:
		return m.cur
	}
	return min(m.cur, m.prev)
}
