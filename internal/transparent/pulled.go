package transparent

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// replicaKinds are the workloads whose status a pull cluster's copy can be counted in from
// what its agent reports (pulledCopy): those kstatus calls Ready only when every desired
// replica is updated, ready and available.
var replicaKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "ReplicaSet": true}

// pulledCopies are the copies of a workload on the chosen pull clusters as far as the hub
// knows them (pulledCopy), by cluster. The hub cannot read a pull cluster (Cluster.spec.mode
// Pull); its agent reports per owner counts and readiness into the cluster's Delivery record,
// not the copy's status.
func (r *Reconciler) pulledCopies(ctx context.Context, u *unstructured.Unstructured, res ownerpass.Result) map[string]*unstructured.Unstructured {
	if !replicaKinds[r.GVK.Kind] || (r.GVK.Group != "apps") {
		return nil
	}
	var out map[string]*unstructured.Unstructured
	for _, c := range res.Chosen {
		want, ok := res.Computed.Want[c]
		if !ok {
			continue
		}
		if !r.Agents.Deliver(ctx, c) {
			continue
		}
		result, ok := res.Synced.Results[c]
		if copied := pulledCopy(u, want.Objects, want.Revision, result, ok); copied != nil {
			if out == nil {
				out = map[string]*unstructured.Unstructured{}
			}
			out[c] = copied
		}
	}
	return out
}

// pulledCopy is a workload's copy on a pull cluster made from what its agent reported: when the
// copy (objects, at revision) is reported delivered whole and Ready, it counts its desired
// replicas as replicas, ready, available and updated (what kstatus checked on the spoke), at
// its own generation; otherwise it counts nothing and has not observed its generation, so the
// fleet-wide observedGeneration waits for it. nil when objects hold no copy of u.
func pulledCopy(u *unstructured.Unstructured, objects []*unstructured.Unstructured, revision string, result deliver.Result, reported bool) *unstructured.Unstructured {
	key := render.Key(u)
	var desired *unstructured.Unstructured
	for _, o := range objects {
		if render.Key(o) == key {
			desired = o
		}
	}
	if desired == nil {
		return nil
	}
	replicas, found, err := unstructured.NestedInt64(desired.Object, "spec", "replicas")
	if err != nil {
		return nil
	}
	if !found {
		replicas = 1 // the API server's default
	}
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(u.GroupVersionKind())
	out.SetNamespace(u.GetNamespace())
	out.SetName(u.GetName())
	out.SetGeneration(1)
	status := map[string]any{"observedGeneration": int64(0)}
	if reported && result.ReadyAt(revision) {
		status = map[string]any{"observedGeneration": int64(1), "replicas": replicas, "readyReplicas": replicas,
			"availableReplicas": replicas, "updatedReplicas": replicas}
		if u.GetKind() == "StatefulSet" {
			status["currentReplicas"] = replicas
		}
	}
	out.Object["status"] = status
	return out
}
