package deliver

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// managerOf reads an object with its managedFields (the spoke cache drops them) to name the
// field manager behind a drift. It costs one read, made only when drift is found.
func (w *clusterWorker) managerOf(ctx context.Context, cl cluster.Cluster, desired *unstructured.Unstructured, paths []string) string {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(desired.GroupVersionKind())
	if err := cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(desired), u); err != nil {
		return ""
	}
	return drift.Manager(u.GetManagedFields(), paths, FieldManager)
}

// reportDrifts completes a result with the drift found: counts, the first few described
// (naming the field manager), and an event for each drift this delivery found anew.
func (w *clusterWorker) reportDrifts(ctx context.Context, cl cluster.Cluster, job Job, prev *observe.Confirmed, drifts []*Drift, res *Result) {
	var fresh []*Drift
	for i, d := range drifts {
		if d == nil || d.Held {
			continue // a held correction is neither drift left nor news (fight.go)
		}
		if d.Corrected && d.Fighting {
			continue // a fight is reported once, not each of its corrections
		}
		if !d.Corrected {
			res.Drifted++
		}
		key := keyAt(job, i)
		if old, ok := prev.Drifted[key]; ok && observe.SameFields(old.Fields, d.Fields) && old.Deleted == d.Deleted {
			d.Manager = old.Manager
		} else {
			fresh = append(fresh, d)
		}
	}
	for i, d := range fresh {
		if i >= maxDriftDetails {
			break
		}
		if !d.Corrected && !d.Deleted && d.Manager == "" {
			d.Manager = w.managerOf(ctx, cl, objectAt(job, d.Object), d.Fields)
		}
		if w.d.opts.OnDrift != nil {
			w.d.opts.OnDrift(job.Owner, w.name, *d)
		}
	}
	for _, d := range drifts {
		if d != nil && !d.Corrected && !d.Held {
			res.DriftedObjects = append(res.DriftedObjects, *d)
		}
	}
	sort.Slice(res.DriftedObjects, func(i, j int) bool { return res.DriftedObjects[i].Object < res.DriftedObjects[j].Object })
	if len(res.DriftedObjects) > maxDriftDetails {
		res.DriftedObjects = res.DriftedObjects[:maxDriftDetails]
	}
}

func keyAt(job Job, i int) string { return render.Key(job.Objects[i]) }

// objectAt finds the desired object a drift describes.
func objectAt(job Job, ref string) *unstructured.Unstructured {
	for _, o := range job.Objects {
		if decide.Describe(o) == ref {
			return o
		}
	}
	return &unstructured.Unstructured{}
}
