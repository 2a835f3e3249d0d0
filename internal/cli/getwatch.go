package cli

import (
	"context"
	"slices"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// clusterQuery chooses the clusters `flotilla get clusters` shows: the ones named, in the
// order given, else every one (by name) whose labels match the selector.
type clusterQuery struct {
	hub      client.WithWatch
	names    []string
	selector labels.Selector
}

func (q clusterQuery) chosen(c *flotillav1.Cluster) bool {
	if len(q.names) > 0 {
		return slices.Contains(q.names, c.Name)
	}
	return q.selector.Matches(labels.Set(c.Labels))
}

// list returns the clusters chosen, the names not found, and the resourceVersion to watch from.
func (q clusterQuery) list(ctx context.Context) ([]flotillav1.Cluster, []string, string, error) {
	var list flotillav1.ClusterList
	if err := q.hub.List(ctx, &list, client.MatchingLabelsSelector{Selector: q.selector}); err != nil {
		return nil, nil, "", err
	}
	if len(q.names) == 0 {
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		return list.Items, nil, list.ResourceVersion, nil
	}
	var found []flotillav1.Cluster
	var missing []string
	for i, name := range q.names {
		if slices.Contains(q.names[:i], name) {
			continue
		}
		at := slices.IndexFunc(list.Items, func(c flotillav1.Cluster) bool { return c.Name == name })
		if at < 0 {
			missing = append(missing, name)
			continue
		}
		found = append(found, list.Items[at])
	}
	return found, missing, list.ResourceVersion, nil
}

// watch prints each chosen cluster again, as the hub tells of a change to it (deleted ones
// too, as kubectl does), from resourceVersion rv on, until ctx ends. A watch the hub closes
// is opened again from the last change seen; one too old to resume lists the clusters again
// and prints them all.
func (q clusterQuery) watch(ctx context.Context, rv string, show func(...flotillav1.Cluster) error) error {
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return q.hub.Watch(ctx, &flotillav1.ClusterList{}, &client.ListOptions{LabelSelector: q.selector, Raw: &opts})
	}}
	for {
		w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, lw)
		if err != nil {
			return err
		}
		expired, err := q.forward(w, show)
		w.Stop()
		if err != nil || !expired || ctx.Err() != nil {
			return err
		}
		found, _, next, err := q.list(ctx)
		if err != nil {
			return err
		}
		if len(found) > 0 {
			if err := show(found...); err != nil {
				return err
			}
		}
		rv = next
	}
}

// forward shows the chosen clusters of each event until the watch ends, telling whether it
// ended because its resourceVersion is too old.
func (q clusterQuery) forward(w watch.Interface, show func(...flotillav1.Cluster) error) (bool, error) {
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if c, ok := ev.Object.(*flotillav1.Cluster); ok && q.chosen(c) {
				if err := show(*c); err != nil {
					return false, err
				}
			}
		case watch.Error:
			err := apierrors.FromObject(ev.Object)
			if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				return true, nil
			}
			return false, err
		}
	}
	return false, nil
}
