package observe

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
)

// Readiness counts the objects of a delivery (objs, identified by ids) that are ready on the
// cluster at the generation the delivery wrote, and describes the first one that is not. read
// returns an object as the spoke cache shows it. Objects that were ready and have not changed
// since (prev) are not looked at again; next records what is ready now.
//
// An object written moments ago is judged by what the cache shows only once the cache shows
// that write: before, its status says nothing of the generation written (a Deployment scaled
// up is not Ready because its old replicas were).
func (c *Cluster) Readiness(objs []*unstructured.Unstructured, ids []Object, prev, next *Confirmed,
	read func(desired *unstructured.Unstructured) (*unstructured.Unstructured, error)) (int, string) {
	ready, first := 0, ""
	notReady := func(desired *unstructured.Unstructured, why string) {
		if first == "" {
			first = decide.Describe(desired) + ": " + why
		}
	}
	for i, desired := range objs {
		key := ids[i].Key
		if prev != nil && prev.Ready[key] && prev.Unchanged(key, ids[i].Hash, next.Under) {
			ready++
			next.Ready[key] = true
			continue
		}
		live, err := read(desired)
		switch {
		case err != nil && (!apierrors.IsNotFound(err) || !c.WroteRecently(key, ids[i].Hash)):
			notReady(desired, "not observed yet")
			continue
		case err != nil:
			// Written by this delivery moments ago and not in the cache yet: judge what was
			// written. Kinds without status (ConfigMaps and the like) are ready as applied;
			// the others have no status yet, so are not.
			live = desired
		case c.CacheBehind(key, live):
			notReady(desired, "the written generation is not observed yet")
			continue
		}
		if ok, why := Ready(live); !ok {
			notReady(desired, why)
			continue
		}
		ready++
		next.Ready[key] = true
	}
	return ready, first
}
