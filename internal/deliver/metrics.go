package deliver

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Every series is a cluster's, and lasts while a worker delivers to that cluster: when the
// worker retires (no owner delivers there any more, or the cluster was removed) its series go
// too, so a fleet whose clusters come and go does not grow them without bound. Counters of a
// cluster delivered to again start from zero, which Prometheus reads as a counter reset.
var (
	spokeWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_spoke_writes_total",
		Help: "Mutating requests Flotilla sent to spoke clusters, by kind of write (apply, delete, create-namespace) and outcome.",
	}, []string{"cluster", "write", "outcome"})
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_deliveries_total",
		Help: "Deliveries of an owner's desired objects to a cluster, by result (complete, failed, disconnected).",
	}, []string{"cluster", "result"})
	deliveryDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_delivery_duration_seconds",
		Help:    "Duration of one delivery to one cluster: applies, prune and readiness check.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 9),
	}, []string{"cluster"})
	driftEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_drift_events_total",
		Help: "Changes to Flotilla's objects on spoke clusters that made them differ from what was applied (or deleted them), as seen by the spoke watches.",
	}, []string{"cluster"})
	// driftReverted is fleet-wide: a service level, not a per-cluster series.
	driftReverted = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "flotilla_drift_revert_duration_seconds",
		Help: "Seconds from the spoke watch event that showed one of Flotilla's objects drifted (changed or deleted there) to the write that corrected it; drifts left by the strategy count when they are corrected.",
		// 50 ms to about 7 minutes: a fight's corrections back off up to 5 minutes.
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
	})
	verifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_verifications_total",
		Help: "Periodic full verifications of a cluster (every delivered object compared with the spoke cache).",
	}, []string{"cluster"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(spokeWrites, deliveries, deliveryDuration, driftEvents, driftReverted, verifications)
}

// forgetMetrics drops every series of a cluster no worker delivers to any more.
func forgetMetrics(cluster string) {
	only := prometheus.Labels{"cluster": cluster}
	spokeWrites.DeletePartialMatch(only)
	deliveries.DeletePartialMatch(only)
	deliveryDuration.DeletePartialMatch(only)
	driftEvents.DeletePartialMatch(only)
	verifications.DeletePartialMatch(only)
}

func countWrite(cluster, write string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	spokeWrites.WithLabelValues(cluster, write, outcome).Inc()
}

func observeDelivery(cluster string, res Result, start time.Time) {
	deliveryDuration.WithLabelValues(cluster).Observe(time.Since(start).Seconds())
	switch {
	case res.Disconnected:
		deliveries.WithLabelValues(cluster, "disconnected").Inc()
	case res.Complete:
		deliveries.WithLabelValues(cluster, "complete").Inc()
	default:
		deliveries.WithLabelValues(cluster, "failed").Inc()
	}
}
