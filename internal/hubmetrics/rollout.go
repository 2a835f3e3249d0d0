package hubmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// stageDuration is observed by the owner pass (package ownerpass) when a stage of a rollout
// completes, once per stage and revision, from the gate's memory: not at scrape time. Its kind
// label is the owner's kind (Propagation, ClusterPropagation, a transparent-mode kind such as
// Deployment, ResourceGraphDefinition).
var stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "flotilla_rollout_stage_duration_seconds",
	Help: "Seconds from a rollout stage's start (its first cluster let through to the new revision) to every cluster of it done (Ready, or failed within maxFailures), soak not included; one observation per stage and revision. A stage under way when the hub controller restarted is not observed.",
	// 1 second to about 18 hours.
	Buckets: prometheus.ExponentialBuckets(1, 4, 9),
}, []string{"kind"})

func init() {
	ctrlmetrics.Registry.MustRegister(stageDuration)
	// The kinds every hub serves are scraped from the start, at zero, so that a rate over
	// them is defined before a first stage completes; other kinds appear with their first.
	for _, kind := range []string{"Propagation", "ClusterPropagation"} {
		stageDuration.WithLabelValues(kind)
	}
}

// ObserveRolloutStage records how long a stage of one of kind's rollouts took.
func ObserveRolloutStage(kind string, took time.Duration) {
	stageDuration.WithLabelValues(kind).Observe(took.Seconds())
}

// The cluster states of flotilla_rollout_clusters, as status.rollout's per-cluster rows name
// them (ClusterRolloutState.state).
var rolloutClusterStates = map[flotillav1.RolloutClusterState]string{
	flotillav1.RolloutClusterPending:            "pending",
	flotillav1.RolloutClusterWaitingForApproval: "waiting_for_approval",
	flotillav1.RolloutClusterProgressing:        "progressing",
	flotillav1.RolloutClusterSoaking:            "soaking",
	flotillav1.RolloutClusterSucceeded:          "succeeded",
	flotillav1.RolloutClusterFailed:             "failed",
}

// countClusters adds a rollout's clusters to states by the state of each, from its stages'
// counts (which cover every cluster, where the per-cluster rows stop at 1000): a stage's done
// clusters soak while the stage does, its pending ones wait for an approval while it does.
func countClusters(states map[string]int32, r *flotillav1.RolloutStatus) {
	for _, s := range r.Stages {
		done, pending := flotillav1.RolloutClusterSucceeded, flotillav1.RolloutClusterPending
		switch s.State {
		case flotillav1.RolloutClusterSoaking:
			done = flotillav1.RolloutClusterSoaking
		case flotillav1.RolloutClusterWaitingForApproval:
			pending = flotillav1.RolloutClusterWaitingForApproval
		}
		states[rolloutClusterStates[done]] += s.Done
		states[rolloutClusterStates[pending]] += s.Pending
		states[rolloutClusterStates[flotillav1.RolloutClusterProgressing]] += s.InFlight
		states[rolloutClusterStates[flotillav1.RolloutClusterFailed]] += s.Failed
	}
}
