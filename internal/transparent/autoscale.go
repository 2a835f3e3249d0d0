package transparent

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// In transparent mode each hub object is delivered by itself, so a workload and the HPA that
// scales it, labelled for the same Placement, meet here: the workload's pass is made with the
// HPAs that scale it (its copies then carry the share annotation, which hands their replicas
// over to the clusters' HPAs), and the HPA's bounds are divided by the shares the workload's
// Delivery records hold (what Flotilla wrote on each cluster), the HPA going only where the
// workload has a share. Each side watches the other: an HPA's changes pass its workload, and a
// workload's records pass its HPAs.

// hpaKind is the HorizontalPodAutoscaler kind transparent mode carries.
var hpaKind = schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}

// autoscalersOf returns the hub HPAs labelled for the same Placement as u that scale it, when u
// is a workload a Placement can divide; none otherwise.
func (r *Reconciler) autoscalersOf(ctx context.Context, u *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if !division.Divisible(r.GVK.GroupKind()) {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(hpaKind.GroupVersion().WithKind(hpaKind.Kind + "List"))
	if err := r.Hub.List(ctx, list, client.InNamespace(u.GetNamespace()),
		client.MatchingLabels{flotillav1.LabelPlacement: u.GetLabels()[flotillav1.LabelPlacement]}); err != nil {
		return nil, fmt.Errorf("list the HPAs of %s %s: %w", r.GVK.Kind, client.ObjectKeyFromObject(u), err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		if gvk, name, ok := division.ScaleTarget(&list.Items[i]); ok && gvk.GroupKind() == r.GVK.GroupKind() && name == u.GetName() {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// scaling returns the pass of an HPA (u) that scales a divided workload labelled for the same
// Placement: the workload's replicas on each chosen cluster, as its records hold them, with
// which the HPA's bounds are divided. It is empty (the HPA goes everywhere as it is) when u is
// not an HPA or its workload is not divided by the Placement; a workload not delivered yet has
// no shares, and the HPA waits for it.
func (r *Reconciler) scaling(ctx context.Context, u *unstructured.Unstructured, placement *flotillav1.Placement, decisions []string) (division.Pass, error) {
	gvk, name, ok := division.ScaleTarget(u)
	if !ok || !carried(gvk) || !division.Divisible(gvk.GroupKind()) || !division.Divides(placement.Spec.Replicas, true) {
		return division.Pass{}, nil
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gvk)
	if err := r.Hub.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: name}, target); err != nil {
		if apierrors.IsNotFound(err) {
			return division.Pass{}, nil
		}
		return division.Pass{}, fmt.Errorf("read the workload HPA %s scales: %w", client.ObjectKeyFromObject(u), err)
	}
	if target.GetLabels()[flotillav1.LabelPlacement] != placement.Name || !target.GetDeletionTimestamp().IsZero() {
		return division.Pass{}, nil
	}
	key := render.Key(target)
	if _, divided := division.Workloads([]*unstructured.Unstructured{target})[key]; !divided {
		return division.Pass{}, nil
	}
	records, err := r.Ledger.Records(ctx, render.Owner{Kind: ownerKind(gvk), Namespace: target.GetNamespace(), Name: target.GetName()})
	if err != nil {
		return division.Pass{}, err
	}
	recorded := percluster.RecordedShares(records, key)
	shares := make(map[string]int64, len(decisions))
	for _, c := range decisions {
		if n, ok := recorded[c]; ok {
			shares[c] = n
		}
	}
	return division.NewPass([]*unstructured.Unstructured{u}, division.Replicas{key: shares}), nil
}

// carried reports whether transparent mode carries a kind.
func carried(gvk schema.GroupVersionKind) bool {
	for _, k := range Kinds {
		if k == gvk {
			return true
		}
	}
	return false
}

// scaledWorkload maps a hub HPA to the workload of r's kind it scales.
func (r *Reconciler) scaledWorkload(_ context.Context, o client.Object) []reconcile.Request {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	gvk, name, ok := division.ScaleTarget(u)
	if !ok || gvk.GroupKind() != r.GVK.GroupKind() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: u.GetNamespace(), Name: name}}}
}

// autoscalersOfRecord maps a Delivery record of a divisible workload to the labelled HPAs
// that scale the workload: its shares may have changed.
func (r *Reconciler) autoscalersOfRecord(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*flotillav1.Delivery)
	if !ok {
		return nil
	}
	gv, err := schema.ParseGroupVersion(d.Spec.Owner.APIVersion)
	if err != nil || !division.Divisible(gv.WithKind(d.Spec.Owner.Kind).GroupKind()) {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(hpaKind.GroupVersion().WithKind(hpaKind.Kind + "List"))
	if err := r.Hub.List(ctx, list, client.InNamespace(d.Spec.Owner.Namespace), client.HasLabels{flotillav1.LabelPlacement}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if gvk, name, ok := division.ScaleTarget(&list.Items[i]); ok && gvk.Group == gv.Group && gvk.Kind == d.Spec.Owner.Kind && name == d.Spec.Owner.Name {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// recordsWritten passes a record's creation, a change of its spec (the shares among it) and
// its deletion.
func recordsWritten() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		UpdateFunc:  func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
