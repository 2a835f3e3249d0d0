package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// sloWriteP99 is the Kubernetes API call latency SLO for mutating calls on one object: p99 ≤ 1 s.
const sloWriteP99 = time.Second

// spokeLoad is how hard a stretch of time pressed on some spokes, read from their audit logs:
// the 429s they answered (API Priority and Fairness turning requests away) and the p99 latency
// of the writes they served, on the worst spoke. It counts every client's requests, not only
// the measured one's: a spoke is overloaded for everybody.
type spokeLoad struct {
	throttled int
	worstP99  float64 // milliseconds
}

func measureLoad(spokes []*localfleet.Plane, from, to time.Time) (spokeLoad, error) {
	var l spokeLoad
	for _, s := range spokes {
		events, err := s.AuditEvents()
		if err != nil {
			return l, err
		}
		var writes []time.Duration
		for _, ev := range events {
			if ev.RequestReceivedTimestamp.Before(from) || ev.RequestReceivedTimestamp.After(to) {
				continue
			}
			if ev.ResponseStatus.Code == http.StatusTooManyRequests {
				l.throttled++
			}
			if ev.Mutating() {
				writes = append(writes, ev.Latency())
			}
		}
		if len(writes) == 0 {
			continue
		}
		l.worstP99 = max(l.worstP99, percentile(writes, 0.99))
	}
	return l, nil
}

// addLoad reports the load of Flotilla's phase of a scenario against the direct client's.
func (r *report) addLoad(scenario string, flotilla, direct spokeLoad) {
	r.add(scenario+"_429s", "requests", f(float64(flotilla.throttled)), f(float64(direct.throttled)),
		"429 responses of the spokes (API Priority and Fairness rejections), any client; target 0")
	r.add(scenario+"_write_p99", "ms", f(flotilla.worstP99), f(direct.worstP99),
		fmt.Sprintf("p99 latency of the writes the spoke API servers served (audit log), worst spoke; SLO ≤ %s", sloWriteP99))
}
