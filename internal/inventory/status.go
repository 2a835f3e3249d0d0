package inventory

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// desiredStatus returns the status a Cluster should have given what is known of its spoke, and
// whether it differs from the current one. Fields the snapshot does not know (no version read
// yet, Nodes not listed yet, the spoke disconnected) keep their last recorded values.
func desiredStatus(c *flotillav1.Cluster, snap snapshot, on placed, now metav1.Time) (flotillav1.ClusterStatus, bool) {
	cur := c.Status
	want := *cur.DeepCopy()
	meta.SetStatusCondition(&want.Conditions, metav1.Condition{
		Type:               flotillav1.ClusterReady,
		Status:             snap.obs.status,
		Reason:             snap.obs.reason,
		Message:            snap.obs.message,
		ObservedGeneration: c.Generation,
	})
	if snap.credObs.reason != "" {
		meta.SetStatusCondition(&want.Conditions, metav1.Condition{
			Type:               flotillav1.ClusterCredentialsValid,
			Status:             snap.credObs.status,
			Reason:             snap.credObs.reason,
			Message:            snap.credObs.message,
			ObservedGeneration: c.Generation,
		})
	} else {
		// The credentials cannot be read (Ready says why): there is nothing to judge.
		meta.RemoveStatusCondition(&want.Conditions, flotillav1.ClusterCredentialsValid)
	}
	if snap.version != "" {
		want.KubernetesVersion = snap.version
	}
	if snap.capacity != nil {
		want.NodeCount = snap.capacity.nodes
		want.ReadyNodeCount = snap.capacity.readyNodes
		want.Allocatable = snap.capacity.allocatable
	}
	want.ObservedGeneration = c.Generation
	want.LastProbeTime = cur.LastProbeTime
	probed := !equality.Semantic.DeepEqual(want, cur)
	want.Placements, want.Placed = on.owners, on.requests
	if !probed && equality.Semantic.DeepEqual(want, cur) {
		return cur, false
	}
	if probed {
		want.LastProbeTime = &now // what is placed is not a probe's finding
	}
	return want, true
}

// placed is what Flotilla placed on a cluster, from its Delivery records.
type placed struct {
	// owners counts the records: the owners with objects there.
	owners int32
	// requests sums the records' spec.placed.
	requests corev1.ResourceList
}
