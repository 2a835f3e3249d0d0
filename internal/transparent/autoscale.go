package transparent

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A workload and the HPAs that scale it, labelled for the same Placement, meet here: the
// workload's pass carries its HPAs (gather.go), an HPA's bounds are divided by the shares the
// workload's records hold, and each side's changes pass the other.

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
	if !ok || !slices.Contains(Kinds, gvk) || !division.Divisible(gvk.GroupKind()) || !division.Divides(placement.Spec.Replicas, true) {
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
	shares, _ := recordedShares(key, decisions, records)
	return division.NewPass([]*unstructured.Unstructured{u}, division.Replicas{key: shares}), nil
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
