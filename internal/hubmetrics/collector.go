package hubmetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

var (
	clustersDesc = prometheus.NewDesc("flotilla_clusters",
		"Clusters of the fleet by the state of their Ready condition: ready (True), not_ready (False: they answer, something is wrong), unreachable (Unknown or not probed yet).",
		[]string{"state"}, nil)
	rolloutsDesc = prometheus.NewDesc("flotilla_rollouts",
		"Owners whose Placement rolls revisions out (Propagations and ClusterPropagations), by kind and by the phase of their latest revision's rollout (status.rollout.phase).",
		[]string{"kind", "phase"}, nil)
	rolloutClustersDesc = prometheus.NewDesc("flotilla_rollout_clusters",
		"Clusters in the rollouts of Propagations and ClusterPropagations, by kind and state (status.clusterResults[].rollout.state): pending (waiting for their stage), waiting_for_approval, progressing (the new revision, not Ready yet), soaking (Ready, their stage soaks), succeeded, failed.",
		[]string{"kind", "state"}, nil)
	ownersDesc = prometheus.NewDesc("flotilla_owners",
		"Owners by kind (Propagation, ClusterPropagation, APIPropagation, and the kinds of transparent mode: Deployment, ...) and by each condition they carry: its type, status and reason. Transparent-mode objects carry Applied and PruneBlocked, as their latest pass would set them on a Propagation.",
		[]string{"kind", "condition", "status", "reason"}, nil)
)

// Cluster states of flotilla_clusters.
const (
	StateReady       = "ready"
	StateNotReady    = "not_ready"
	StateUnreachable = "unreachable"
)

// Scrapes read the cache's own objects, without copying them (client.UnsafeDisableDeepCopy):
// they only count conditions, and never change what they read.

// scrapeTimeout bounds the cache reads of one scrape.
const scrapeTimeout = 5 * time.Second

// source is the hub cache read at scrape time, when the replica was elected, and the owner
// kinds whose conditions live in memory.
type source struct {
	reader  client.Reader
	elected <-chan struct{}
	memory  []MemoryOwners
}

// MemoryOwners is an owner kind whose conditions are not stored in the hub's objects but kept
// by its controller (transparent mode's kinds): flotilla_owners counts them at scrape time.
type MemoryOwners interface {
	// MetricsKind is the kind label of its series.
	MetricsKind() string
	// OwnerConditions are the conditions of each owner of the kind.
	OwnerConditions() [][]metav1.Condition
}

var current atomic.Pointer[source]

type collector struct{}

func init() { ctrlmetrics.Registry.MustRegister(collector{}) }

// Use makes scrapes read the hub through reader, and the owners of memory, once elected is
// closed (the replica leads), until the returned function is called.
func Use(reader client.Reader, elected <-chan struct{}, memory ...MemoryOwners) (stop func()) {
	s := &source{reader: reader, elected: elected, memory: memory}
	current.Store(s)
	return func() { current.CompareAndSwap(s, nil) }
}

func (collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clustersDesc
	ch <- ownersDesc
	ch <- rolloutsDesc
	ch <- rolloutClustersDesc
}

func (collector) Collect(ch chan<- prometheus.Metric) {
	s := current.Load()
	if s == nil {
		return
	}
	select {
	case <-s.elected:
	default:
		return // not the leader: the leader exports them
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	collectClusters(ctx, s.reader, ch)
	collectOwners(ctx, s.reader, s.memory, ch)
}

func collectClusters(ctx context.Context, r client.Reader, ch chan<- prometheus.Metric) {
	var list flotillav1.ClusterList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return // not exported rather than wrong: an absent series is what an alert can see
	}
	counts := map[string]int{StateReady: 0, StateNotReady: 0, StateUnreachable: 0}
	for i := range list.Items {
		counts[ClusterState(list.Items[i].Status.Conditions)]++
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(clustersDesc, prometheus.GaugeValue, float64(n), state)
	}
}

// ClusterState is a Cluster's state as flotilla_clusters counts it.
func ClusterState(conditions []metav1.Condition) string {
	c := meta.FindStatusCondition(conditions, flotillav1.ClusterReady)
	switch {
	case c == nil:
		return StateUnreachable
	case c.Status == metav1.ConditionTrue:
		return StateReady
	case c.Status == metav1.ConditionFalse:
		return StateNotReady
	default:
		return StateUnreachable
	}
}

// ownerKey is one series of flotilla_owners.
type ownerKey struct{ kind, condition, status, reason string }

func collectOwners(ctx context.Context, r client.Reader, memory []MemoryOwners, ch chan<- prometheus.Metric) {
	counts := map[ownerKey]int{}
	add := func(kind string, conditions []metav1.Condition) {
		for _, c := range conditions {
			counts[ownerKey{kind, c.Type, string(c.Status), c.Reason}]++
		}
	}
	var props flotillav1.PropagationList
	if err := r.List(ctx, &props, client.UnsafeDisableDeepCopy); err == nil {
		for i := range props.Items {
			add("Propagation", props.Items[i].Status.Conditions)
		}
	}
	var cprops flotillav1.ClusterPropagationList
	if err := r.List(ctx, &cprops, client.UnsafeDisableDeepCopy); err == nil {
		for i := range cprops.Items {
			add("ClusterPropagation", cprops.Items[i].Status.Conditions)
		}
	}
	var apis flotillav1.APIPropagationList
	if err := r.List(ctx, &apis, client.UnsafeDisableDeepCopy); err == nil {
		for i := range apis.Items {
			add("APIPropagation", apis.Items[i].Status.Conditions)
		}
	}
	for _, m := range memory {
		for _, conditions := range m.OwnerConditions() {
			add(m.MetricsKind(), conditions)
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(ownersDesc, prometheus.GaugeValue, float64(n), k.kind, k.condition, k.status, k.reason)
	}
	collectRollouts(ch, map[string][]*flotillav1.RolloutStatus{"Propagation": rolloutsOf(props.Items), "ClusterPropagation": rolloutsOfCluster(cprops.Items)})
}

// rolloutPhases are every phase flotilla_rollouts reports, 0 included.
var rolloutPhases = []flotillav1.RolloutPhase{flotillav1.RolloutProgressing, flotillav1.RolloutSoaking, flotillav1.RolloutWaitingForApproval,
	flotillav1.RolloutPaused, flotillav1.RolloutHalted, flotillav1.RolloutRolledBack, flotillav1.RolloutComplete}

// collectRollouts exports the rollouts of each kind by phase, and their clusters by state.
func collectRollouts(ch chan<- prometheus.Metric, byKind map[string][]*flotillav1.RolloutStatus) {
	for kind, rollouts := range byKind {
		phases := map[flotillav1.RolloutPhase]int{}
		states := map[string]int32{}
		for _, state := range rolloutClusterStates {
			states[state] = 0
		}
		for _, r := range rollouts {
			phases[r.Phase]++
			countClusters(states, r)
		}
		for _, p := range rolloutPhases {
			ch <- prometheus.MustNewConstMetric(rolloutsDesc, prometheus.GaugeValue, float64(phases[p]), kind, string(p))
		}
		for state, n := range states {
			ch <- prometheus.MustNewConstMetric(rolloutClustersDesc, prometheus.GaugeValue, float64(n), kind, state)
		}
	}
}

func rolloutsOf(items []flotillav1.Propagation) []*flotillav1.RolloutStatus {
	var out []*flotillav1.RolloutStatus
	for i := range items {
		if r := items[i].Status.Rollout; r != nil {
			out = append(out, r)
		}
	}
	return out
}

func rolloutsOfCluster(items []flotillav1.ClusterPropagation) []*flotillav1.RolloutStatus {
	var out []*flotillav1.RolloutStatus
	for i := range items {
		if r := items[i].Status.Rollout; r != nil {
			out = append(out, r)
		}
	}
	return out
}
