package deliver

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// liveIndex answers "does this object exist on the spoke, and whose is it?" for objects the
// spoke cache (which holds only Flotilla's objects) does not have. It lists each kind and
// namespace once per delivery, metadata only, instead of one GET per object: a bulk delivery
// of a thousand new objects costs one read, not a thousand.
type liveIndex struct {
	reader client.Reader

	mu     sync.Mutex
	groups map[liveGroup]*liveList
}

type liveGroup struct {
	gvk       schema.GroupVersionKind
	namespace string
}

type liveList struct {
	once  sync.Once
	items map[string]*metav1.PartialObjectMetadata
	err   error
}

func newLiveIndex(reader client.Reader) *liveIndex {
	return &liveIndex{reader: reader, groups: map[liveGroup]*liveList{}}
}

// get returns the live metadata of an object, nil if it does not exist. A kind the spoke does
// not serve has no objects.
func (l *liveIndex) get(ctx context.Context, o *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	g := liveGroup{gvk: o.GroupVersionKind(), namespace: o.GetNamespace()}
	l.mu.Lock()
	list, ok := l.groups[g]
	if !ok {
		list = &liveList{}
		l.groups[g] = list
	}
	l.mu.Unlock()
	list.once.Do(func() {
		ml := &metav1.PartialObjectMetadataList{}
		ml.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
		var opts []client.ListOption
		if g.namespace != "" {
			opts = append(opts, client.InNamespace(g.namespace))
		}
		err := l.reader.List(ctx, ml, opts...)
		if meta.IsNoMatchError(err) {
			err = nil
		}
		list.err = err
		list.items = make(map[string]*metav1.PartialObjectMetadata, len(ml.Items))
		for i := range ml.Items {
			list.items[ml.Items[i].Name] = &ml.Items[i]
		}
	})
	if list.err != nil {
		return nil, list.err
	}
	return list.items[o.GetName()], nil
}
