package deliver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unschedulableReadTimeout bounds the reads of one Unschedulable call.
const unschedulableReadTimeout = 10 * time.Second

// Unschedulable counts the pods of a delivered workload (apps/v1, found by its key and kind in
// workload) that have stayed Unschedulable on a cluster for at least olderThan, with the
// replicas its copy there asks for (the count is of those), and says when to look again if
// some may cross that line later (0: no need). It lists pods only while the
// workload's copy there has fewer Available replicas than it asks for, straight from the API
// server (Flotilla keeps no Pod informer): the read costs nothing while workloads are healthy.
// A cluster that is not engaged has nothing to count.
func (d *Deliverer) Unschedulable(ctx context.Context, cluster string, workload *unstructured.Unstructured, olderThan time.Duration, now time.Time) (pending, asked int32, recheck time.Duration, err error) {
	e := d.engagement(cluster)
	if e == nil {
		return 0, 0, 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, unschedulableReadTimeout)
	defer cancel()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(workload.GroupVersionKind())
	if err := e.cl.GetCache().Get(ctx, client.ObjectKeyFromObject(workload), live); err != nil {
		return 0, 0, 0, client.IgnoreNotFound(err)
	}
	wanted, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
	available, _, _ := unstructured.NestedInt64(live.Object, "status", "availableReplicas")
	if available >= wanted {
		return 0, 0, 0, nil
	}
	raw, found, err := unstructured.NestedMap(live.Object, "spec", "selector")
	if err != nil || !found {
		return 0, 0, 0, nil // no selector: nothing to find its pods by
	}
	var ls metav1.LabelSelector
	if err = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return 0, 0, 0, fmt.Errorf("%s on %s: read spec.selector: %w", live.GetName(), cluster, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s on %s: spec.selector: %w", live.GetName(), cluster, err)
	}
	var pods corev1.PodList
	if err := e.cl.GetAPIReader().List(ctx, &pods, client.InNamespace(live.GetNamespace()), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return 0, 0, 0, fmt.Errorf("list the pods of %s on %s: %w", live.GetName(), cluster, err)
	}
	pending, recheck = countUnschedulable(pods.Items, olderThan, now)
	if pending == 0 && recheck == 0 {
		recheck = olderThan // short of Available for another reason so far; look again later
	}
	return pending, int32(wanted), recheck, nil
}

// countUnschedulable counts the pods Unschedulable for at least olderThan, and returns how long
// until the next younger one would be.
func countUnschedulable(pods []corev1.Pod, olderThan time.Duration, now time.Time) (int32, time.Duration) {
	var count int32
	var recheck time.Duration
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
				continue
			}
			if wait := c.LastTransitionTime.Add(olderThan).Sub(now); wait > 0 {
				if recheck == 0 || wait < recheck {
					recheck = wait
				}
			} else {
				count++
			}
		}
	}
	return count, recheck
}
