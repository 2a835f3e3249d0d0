package inventory

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/flotilla-dev/flotilla/internal/intern"
)

// Spoke caches hold one copy of every delivered object per cluster, and those copies are equal
// across the fleet: interning their strings makes a thousand objects on ten clusters cost
// about one copy of each string, not ten. Strings longer than internMaxLen are kept as they are.
const (
	internLimit  = 1 << 17
	internMaxLen = 16 << 10
)

// spokeObjectTransform drops what Flotilla never reads of a spoke object (managedFields; who
// changed a field is read from the API server when a drift needs naming) and shares its
// strings with equal ones already cached for other clusters.
func spokeObjectTransform(table *intern.Table) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(obj any) (any, error) {
		obj, err := strip(obj)
		if err != nil {
			return obj, err
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			table.Value(u.Object)
		}
		return obj, nil
	}
}
