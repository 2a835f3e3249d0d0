package transparent

import (
	"context"
	"maps"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// gather adds what only transparent mode knows to the per-cluster input of the object's pass
// (package ownerpass): for a workload the Placement divides, the HPAs of the same Placement
// that scale it (their bounds follow its shares) and, when live, what its copies run now where
// no record says it (a record written before records kept shares is completed from the
// cluster's copy); for an HPA, the shares of the workload it scales (scaling).
func (r *Reconciler) gather(ctx context.Context, u *unstructured.Unstructured, pc *percluster.Input,
	records map[string]*flotillav1.Delivery, live bool) (recheck time.Duration, err error) {
	if !pc.Divides() {
		pc.Given, err = r.scaling(ctx, u, pc.Placement, pc.Chosen)
		return 0, err
	}
	if pc.Scope, err = r.autoscalersOf(ctx, u); err != nil || !live {
		return 0, err
	}
	key := render.Key(pc.Latest.Objects[0])
	have, unrecorded := recordedShares(key, pc.Chosen, records)
	maps.Copy(have, r.replicasOn(ctx, client.ObjectKeyFromObject(u), unrecorded))
	pc.Have = division.Replicas{key: have}
	return 0, nil
}

// recordedShares is what the records say each chosen cluster runs of the workload key, and
// the clusters delivered to whose record keeps no share (written before records kept them).
func recordedShares(key string, decisions []string, records map[string]*flotillav1.Delivery) (have map[string]int64, unrecorded []string) {
	recorded := percluster.RecordedShares(records, key)
	have = map[string]int64{}
	for _, c := range decisions {
		if n, ok := recorded[c]; ok {
			have[c] = n
		} else if _, delivered := records[c]; delivered {
			unrecorded = append(unrecorded, c)
		}
	}
	return have, unrecorded
}

// replicasOn reads spec.replicas of the object's copies on clusters from the spoke caches; a
// cluster whose copy cannot be read is left out.
func (r *Reconciler) replicasOn(ctx context.Context, key client.ObjectKey, clusters []string) map[string]int64 {
	out := make(map[string]int64, len(clusters))
	for _, c := range clusters {
		live, ok := r.spokeCopy(ctx, c, key)
		if !ok {
			continue
		}
		// What Flotilla wrote: the share annotation of a copy an HPA scales, else its replicas.
		if share, err := strconv.ParseInt(live.GetAnnotations()[flotillav1.AnnotationShare], 10, 64); err == nil {
			out[c] = share
		} else if n, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); found {
			out[c] = n
		}
	}
	return out
}
