// Package spokeclient is the client-side flow control of Flotilla's requests to one spoke: the
// spoke, not Flotilla, sets the pace.
//
// A spoke's API server protects itself with API Priority and Fairness (APF): it queues what it
// cannot serve at once and answers 429 with a Retry-After header when its queues are full. A
// fixed client-side QPS cap only hides that: it slows Flotilla down on a spoke with room to
// spare and guesses wrong on a busy one. So a spoke's clients get no token bucket at all (QPS
// -1, no RateLimiter, as kubectl and controller-runtime do) and instead share one Flow, which
// bounds how many requests are in flight to the spoke at once and moves that bound with what
// the spoke answers:
//
//   - additive increase: every healthy response, while at least half the window is in use,
//     grows the window by 1/window, so by about one request per round trip of a full window;
//     an idle spoke's window does not grow untested;
//   - multiplicative decrease: a response the server asks the client to wait on (429, or a 5xx
//     with Retry-After, exactly the responses client-go itself retries) halves the window;
//     writes whose latency rises well above its recent floor (their moving average more than
//     SlowFactor times the lowest write latency of the last FloorPeriod or two, and at least
//     SlowMargin, a quarter of the 1 s write SLO, above it) shrink it by a quarter. A window
//     shrinks at most once per round trip: responses to requests sent before the last
//     decrease do not decrease it again, so a burst of 429s to requests sent together counts
//     once. Only writes, similar in cost, measure latency: a LIST of thousands of objects is
//     slow and healthy;
//   - the window stays between Limits.Min and Limits.Max.
//
// Only requests to the resource API (/api, /apis) take a slot, and only until their response
// body is read or closed. Watches are long-running and never hold one; neither do health checks
// (/readyz, /livez, /healthz) nor /version, so a spoke's probe is never queued behind Flotilla's
// own writes.
//
// Nothing here retries. client-go's rest.Request already retries a 429 or a 5xx that carries
// Retry-After (up to 10 times, after waiting the seconds the server asked for, see
// checkWait/IsNextRetry in k8s.io/client-go/rest); each retry passes through this transport
// again and waits for a slot like any other request, so a throttled spoke sees fewer requests,
// not more.
//
// Each Flow exports flotilla_spoke_requests_in_flight, flotilla_spoke_in_flight_limit,
// flotilla_spoke_request_wait_seconds, flotilla_spoke_throttled_responses_total and
// flotilla_spoke_in_flight_decreases_total with a cluster label; Forget drops a cluster's
// series when the cluster is no longer a member.
package spokeclient
