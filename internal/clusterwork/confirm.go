package clusterwork

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// A prune beyond an owner's budget waits for the flotilla.dev/confirm-prune annotation on the
// owner (decide.Strategy.PruneConfirmed), which lives on the hub where the agent cannot read
// it. So each item carries the value the owner holds now (Item.PruneConfirmed), read from the
// hub cache, and the ETag covers it: confirming a prune on the hub reaches the agent like any
// other change of its work, within one held request's wait. The value is a revision name or
// "everywhere", never Secret data.

// confirmations returns, per record (namespace/name), the confirm-prune annotation of its
// owner, for the owners that carry one. An owner that cannot be read confirms nothing.
func (h *Handler) confirmations(ctx context.Context, records []flotillav1.Delivery) map[string]string {
	var out map[string]string
	for i := range records {
		o := records[i].Spec.Owner
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil {
			continue
		}
		kind, ok := h.Owners[gv.WithKind(o.Kind).GroupKind()]
		if !ok {
			continue
		}
		owner := kind.New()
		if h.Hub.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, owner) != nil {
			continue
		}
		if v := owner.GetAnnotations()[flotillav1.AnnotationConfirmPrune]; v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[records[i].Namespace+"/"+records[i].Name] = v
		}
	}
	return out
}
