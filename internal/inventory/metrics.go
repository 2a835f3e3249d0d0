package inventory

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	clusterReady = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_cluster_ready",
		Help: "Whether a spoke cluster is Ready: 1 True, 0 False, -1 Unknown (unreachable).",
	}, []string{"cluster"})
	clusterEngaged = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_cluster_engaged",
		Help: "Whether Flotilla's controllers are connected to (watching) a spoke cluster: 1 or 0.",
	}, []string{"cluster"})
	probesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_cluster_probes_total",
		Help: "Health probes of spoke clusters, by result (the Ready reason).",
	}, []string{"cluster", "result"})
	lastProbe = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_cluster_last_probe_timestamp_seconds",
		Help: "Unix time of the last completed health probe of a spoke cluster.",
	}, []string{"cluster"})
	credentialExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_cluster_credential_expiry_seconds",
		Help: "Seconds until the token of a spoke cluster's credentials expires (negative once expired), as of the last probe; absent for credentials without an expiry.",
	}, []string{"cluster"})
	probeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flotilla_cluster_probe_duration_seconds",
		Help:    "Duration of spoke health probes.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
	}, []string{"cluster"})
	stubReads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flotilla_spoke_cache_stub_reads_total",
		Help: "Objects read from a spoke because its cache held them as stubs (no known owner there, or past the cache's bound).",
	}, []string{"cluster"})
)

// Gauges of what each engaged spoke's cache holds, read from its budget when scraped.
var (
	cacheBytesDesc = prometheus.NewDesc("flotilla_spoke_cache_bytes",
		"Estimated JSON bytes of the objects a spoke's cache keeps whole (bounded by --spoke-cache-bytes).", []string{"cluster"}, nil)
	cacheObjectsDesc = prometheus.NewDesc("flotilla_spoke_cache_objects",
		"Objects a spoke's cache keeps whole: those of known owners, where those owners deliver.", []string{"cluster"}, nil)
	cacheStubsDesc = prometheus.NewDesc("flotilla_spoke_cache_stubs",
		"Objects carrying the owner label that a spoke's cache keeps as stubs (name and labels only).", []string{"cluster"}, nil)
	cacheFullDesc = prometheus.NewDesc("flotilla_spoke_cache_full",
		"1 when a spoke's cache is at its bound and stubs objects of known owners, else 0.", []string{"cluster"}, nil)
)

// budgets are the engaged spokes' cache budgets, by cluster: the latest engagement's.
var budgets sync.Map

type budgetCollector struct{}

func (budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cacheBytesDesc
	ch <- cacheObjectsDesc
	ch <- cacheStubsDesc
	ch <- cacheFullDesc
}

func (budgetCollector) Collect(ch chan<- prometheus.Metric) {
	budgets.Range(func(key, value any) bool {
		cluster := key.(string)
		bytes, objects, stubs, full := value.(*cacheBudget).totals()
		fullValue := 0.0
		if full {
			fullValue = 1
		}
		ch <- prometheus.MustNewConstMetric(cacheBytesDesc, prometheus.GaugeValue, float64(bytes), cluster)
		ch <- prometheus.MustNewConstMetric(cacheObjectsDesc, prometheus.GaugeValue, float64(objects), cluster)
		ch <- prometheus.MustNewConstMetric(cacheStubsDesc, prometheus.GaugeValue, float64(stubs), cluster)
		ch <- prometheus.MustNewConstMetric(cacheFullDesc, prometheus.GaugeValue, fullValue, cluster)
		return true
	})
}

func init() {
	ctrlmetrics.Registry.MustRegister(clusterReady, clusterEngaged, probesTotal, lastProbe, probeDuration, credentialExpiry, stubReads, budgetCollector{})
}

// forgetMetrics drops every series of a cluster that is no longer a member.
func forgetMetrics(cluster string) {
	clusterReady.DeleteLabelValues(cluster)
	clusterEngaged.DeleteLabelValues(cluster)
	lastProbe.DeleteLabelValues(cluster)
	credentialExpiry.DeleteLabelValues(cluster)
	probeDuration.DeleteLabelValues(cluster)
	stubReads.DeleteLabelValues(cluster)
	probesTotal.DeletePartialMatch(prometheus.Labels{"cluster": cluster})
}

// observeProbe records one finished probe.
func observeProbe(cluster string, obs observation, start time.Time) {
	probeDuration.WithLabelValues(cluster).Observe(time.Since(start).Seconds())
	probesTotal.WithLabelValues(cluster, obs.reason).Inc()
	lastProbe.WithLabelValues(cluster).SetToCurrentTime()
	switch obs.status {
	case metav1.ConditionTrue:
		clusterReady.WithLabelValues(cluster).Set(1)
	case metav1.ConditionFalse:
		clusterReady.WithLabelValues(cluster).Set(0)
	default:
		clusterReady.WithLabelValues(cluster).Set(-1)
	}
}

// observeCredentialExpiry exports the seconds left on a cluster's token; nil (no expiry)
// removes the series.
func observeCredentialExpiry(cluster string, tok *tokenClaims, now time.Time) {
	if tok == nil {
		credentialExpiry.DeleteLabelValues(cluster)
		return
	}
	credentialExpiry.WithLabelValues(cluster).Set(tok.expires().Sub(now).Seconds())
}
