package propagation

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// renderCache keeps each owner's rendered objects by hub object, so a change to one object of
// a thousand renders and hashes one object, not a thousand. An entry is valid while the hub
// object's resourceVersion is unchanged. Manifest documents (no UID) are always rendered.
type renderCache struct {
	mu      sync.Mutex
	byOwner map[render.Owner]map[types.UID]renderedObject
}

type renderedObject struct {
	resourceVersion string
	rendered        *unstructured.Unstructured
}

func newRenderCache() *renderCache {
	return &renderCache{byOwner: map[render.Owner]map[types.UID]renderedObject{}}
}

// renderAll renders hub objects for owner, reusing what is unchanged, and keeps only the
// entries of this selection. The returned objects are shared: callers must not modify them.
func (c *renderCache) renderAll(owner render.Owner, hubObjects []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	c.mu.Lock()
	old := c.byOwner[owner]
	c.mu.Unlock()
	fresh := make(map[types.UID]renderedObject, len(hubObjects))
	out := make([]*unstructured.Unstructured, 0, len(hubObjects))
	for _, o := range hubObjects {
		uid, rv := o.GetUID(), o.GetResourceVersion()
		if e, ok := old[uid]; ok && uid != "" && e.resourceVersion == rv {
			fresh[uid] = e
			out = append(out, e.rendered)
			continue
		}
		ro, err := render.Render(o, owner)
		if err != nil {
			return nil, err
		}
		if uid != "" {
			fresh[uid] = renderedObject{resourceVersion: rv, rendered: ro}
		}
		out = append(out, ro)
	}
	c.mu.Lock()
	c.byOwner[owner] = fresh
	c.mu.Unlock()
	return out, nil
}

// forget drops an owner's entries.
func (c *renderCache) forget(owner render.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byOwner, owner)
}
