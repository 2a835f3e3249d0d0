package spokeclient

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Every series is a cluster's and lasts while the cluster is a member (Flow.Forget).
var (
	inFlightRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_spoke_requests_in_flight",
		Help: "Requests to a spoke cluster holding an in-flight slot now (watches and health checks take none).",
	}, []string{"cluster"})
	inFlightLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_spoke_in_flight_limit",
		Help: "How many requests Flotilla lets in flight to a spoke cluster at once; it grows while the spoke answers promptly and shrinks on 429s and rising latency.",
	}, []string{"cluster"})
	requestWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_spoke_request_wait_seconds",
		Help:    "Time a request to a spoke cluster waited for an in-flight slot.",
		Buckets: []float64{0, 0.001, 0.004, 0.016, 0.064, 0.256, 1, 4},
	}, []string{"cluster"})
	throttledResponses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_spoke_throttled_responses_total",
		Help: "Responses of a spoke cluster asking Flotilla to wait: 429 (API Priority and Fairness), or a 5xx with Retry-After. client-go retries them.",
	}, []string{"cluster"})
	writeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "flotilla_spoke_write_duration_seconds",
		Help: "Time a spoke cluster took to answer a write (POST, PUT, PATCH, DELETE of its resource API), from the request sent to the response's headers; the wait for an in-flight slot is flotilla_spoke_request_wait_seconds.",
		// 2 ms to about 8 s.
		Buckets: prometheus.ExponentialBuckets(0.002, 2, 13),
	}, []string{"cluster"})
	limitDecreases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_spoke_in_flight_decreases_total",
		Help: "Times the in-flight limit of a spoke cluster shrank, by reason: throttled (the spoke asked to wait) or latency (writes well above their recent floor).",
	}, []string{"cluster", "reason"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(inFlightRequests, inFlightLimit, requestWait, writeDuration, throttledResponses, limitDecreases)
}

// flowMetrics are one cluster's series, looked up once.
type flowMetrics struct {
	inFlight  prometheus.Gauge
	limit     prometheus.Gauge
	wait      prometheus.Observer
	write     prometheus.Observer
	throttled prometheus.Counter
	decreases *prometheus.CounterVec
}

func metricsFor(cluster string) flowMetrics {
	// Counters of known labels start at 0, so that rate() and alerts see their first increase.
	limitDecreases.WithLabelValues(cluster, string(throttled))
	limitDecreases.WithLabelValues(cluster, string(slow))
	return flowMetrics{
		inFlight:  inFlightRequests.WithLabelValues(cluster),
		limit:     inFlightLimit.WithLabelValues(cluster),
		wait:      requestWait.WithLabelValues(cluster),
		write:     writeDuration.WithLabelValues(cluster),
		throttled: throttledResponses.WithLabelValues(cluster),
		decreases: limitDecreases,
	}
}

// forgetMetrics drops every series of a cluster.
func forgetMetrics(cluster string) {
	only := prometheus.Labels{"cluster": cluster}
	inFlightRequests.DeletePartialMatch(only)
	inFlightLimit.DeletePartialMatch(only)
	requestWait.DeletePartialMatch(only)
	writeDuration.DeletePartialMatch(only)
	throttledResponses.DeletePartialMatch(only)
	limitDecreases.DeletePartialMatch(only)
}
