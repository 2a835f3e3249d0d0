package deliver

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The objects each cluster holds for Flotilla, by state, read from the latest delivery results
// when scraped: what an on-call person looks at first on a cluster, without a series per
// owner or object.
var (
	clusterObjectsDesc = prometheus.NewDesc("flotilla_cluster_objects",
		"Objects Flotilla delivers to a cluster, by state as the latest delivery of each owner found them: applied (in their desired state), ready (of those, ready as kstatus computes it), failed (not in their desired state), drifted (differ there and left so by the strategy), fighting (someone keeps undoing their correction).",
		[]string{"cluster", "state"}, nil)
	clusterOwnersDesc = prometheus.NewDesc("flotilla_cluster_owners",
		"Owners (Propagations, ClusterPropagations, transparent-mode objects, fleet API instances) that deliver to a cluster now.",
		[]string{"cluster"}, nil)
)

// running are the Deliverers whose context has not ended, as the collector reads them.
var running sync.Map // *Deliverer → struct{}

type objectsCollector struct{}

func init() { ctrlmetrics.Registry.MustRegister(objectsCollector{}) }

func (objectsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterObjectsDesc
	ch <- clusterOwnersDesc
}

// objectCounts are one cluster's sums.
type objectCounts struct{ owners, applied, ready, failed, drifted, fighting int }

func (objectsCollector) Collect(ch chan<- prometheus.Metric) {
	sums := map[string]*objectCounts{}
	running.Range(func(key, _ any) bool {
		key.(*Deliverer).countObjects(sums)
		return true
	})
	for cluster, n := range sums {
		ch <- prometheus.MustNewConstMetric(clusterOwnersDesc, prometheus.GaugeValue, float64(n.owners), cluster)
		for state, v := range map[string]int{"applied": n.applied, "ready": n.ready, "failed": n.failed, "drifted": n.drifted, "fighting": n.fighting} {
			ch <- prometheus.MustNewConstMetric(clusterObjectsDesc, prometheus.GaugeValue, float64(v), cluster, state)
		}
	}
}

// track has the collector read d until ctx ends.
func (d *Deliverer) track() {
	running.Store(d, struct{}{})
	go func() {
		<-d.ctx.Done()
		running.Delete(d)
	}()
}

// countObjects adds the latest results of every worker's owners to sums, by cluster.
func (d *Deliverer) countObjects(sums map[string]*objectCounts) {
	d.mu.Lock()
	workers := make([]*clusterWorker, 0, len(d.workers))
	for _, w := range d.workers {
		workers = append(workers, w)
	}
	d.mu.Unlock()
	for _, w := range workers {
		n := sums[w.name]
		if n == nil {
			n = &objectCounts{}
			sums[w.name] = n
		}
		w.mu.Lock()
		n.owners += len(w.jobs)
		for _, r := range w.results {
			n.applied += r.Applied
			n.ready += r.Ready
			n.failed += r.Failed
			n.drifted += r.Drifted
			n.fighting += r.Fighting
		}
		w.mu.Unlock()
	}
}
