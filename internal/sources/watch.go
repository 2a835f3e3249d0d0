package sources

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// clusterChanged passes Cluster events that can matter to an importer: creation, deletion,
// and changes of labels, annotations or spec. Status changes (every probe result) do not.
var clusterChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
			!mapsEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
			!mapsEqual(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()) ||
			e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// clusterEvents maps a Cluster to the source objects of one source that must look again: the
// one it was imported from (it was changed or deleted by hand: the source puts it back), and
// those of every Cluster with the same spoke identity (one of two registrations of a spoke
// went away, or appeared: the other may now be imported, or must yield).
func (i *importer) clusterEvents(source string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		add := func(o client.Object) {
			if o.GetLabels()[flotillav1.LabelSource] != source {
				return
			}
			if key, ok := refKey(o.GetAnnotations()[flotillav1.AnnotationSourceRef]); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: key})
			}
		}
		add(obj)
		if id := obj.GetLabels()[flotillav1.LabelClusterID]; id != "" {
			for _, ref := range i.losersOf(id, source) {
				if key, ok := refKey(ref); ok {
					reqs = append(reqs, reconcile.Request{NamespacedName: key})
				}
			}
			var same flotillav1.ClusterList
			if err := i.hub.List(ctx, &same, client.MatchingLabels{flotillav1.LabelClusterID: id}); err == nil {
				for k := range same.Items {
					add(&same.Items[k])
				}
			}
		}
		return reqs
	})
}

// refKey parses a source reference, <namespace>/<name>.
func refKey(ref string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}
