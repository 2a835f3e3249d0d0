package install

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Holding is what one cluster holds of Flotilla's deliveries: the Delivery records that name
// it (one per owner) and the objects they count.
type Holding struct {
	Cluster string
	Owners  int
	Objects int32
}

// Holdings reads every Delivery record on the hub and returns, by cluster name, what each
// cluster holds. A record outlives its objects only until the controller removed them, so a
// cluster with a record may hold objects even where the record counts none yet. A hub without
// Flotilla's CRDs holds nothing.
func Holdings(ctx context.Context, c client.Client) ([]Holding, error) {
	list := &flotillav1.DeliveryList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list Delivery records: %w", err)
	}
	by := map[string]*Holding{}
	for _, d := range list.Items {
		h := by[d.Spec.Cluster]
		if h == nil {
			h = &Holding{Cluster: d.Spec.Cluster}
			by[d.Spec.Cluster] = h
		}
		h.Owners++
		h.Objects += d.Status.Count
	}
	out := make([]Holding, 0, len(by))
	for _, h := range by {
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out, nil
}
