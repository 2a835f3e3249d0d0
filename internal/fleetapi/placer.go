package fleetapi

import (
	"context"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
)

// chooses reports whether an APIPropagation chooses an RGD: by name, or by its label selector.
// A malformed selector chooses nothing (the APIPropagation reports it).
func chooses(p *flotillav1.APIPropagation, rgd metav1.Object) bool {
	sel := p.Spec.ResourceGraphDefinitions
	if slices.Contains(sel.Names, rgd.GetName()) {
		return true
	}
	if sel.LabelSelector == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
	return err == nil && s.Matches(labels.Set(rgd.GetLabels()))
}

// HubOnlyMarker, "false" as a label or an annotation of an RGD, keeps it on the hub: no
// APIPropagation serves it, whatever chooses it (KREP-013's marker for RGDs that are not to be
// distributed). Set on an RGD served already, its CRDs stay on the clusters (orphaned).
const HubOnlyMarker = "kro.run/distribute"

// hubOnly reports whether an RGD carries HubOnlyMarker "false".
func hubOnly(rgd metav1.Object) bool {
	return rgd.GetLabels()[HubOnlyMarker] == "false" || rgd.GetAnnotations()[HubOnlyMarker] == "false"
}

// ServedBy returns the APIPropagation that serves an RGD (nil when none does), read from hub:
// the one whose Placement its rollout follows.
func ServedBy(ctx context.Context, hub client.Reader, rgd metav1.Object) (*flotillav1.APIPropagation, error) {
	var props flotillav1.APIPropagationList
	if err := hub.List(ctx, &props); err != nil {
		return nil, err
	}
	return placerOf(rgd, props.Items), nil
}

// placerOf returns the APIPropagation that serves an RGD, among all of them: of those that
// choose it, the one whose name sorts first, and one being deleted only when no other chooses
// it (so that deleting one of two hands the RGD over instead of removing it). nil when none
// chooses it, or the RGD is hub-only.
func placerOf(rgd metav1.Object, props []flotillav1.APIPropagation) *flotillav1.APIPropagation {
	if hubOnly(rgd) {
		return nil
	}
	var live, deleting []*flotillav1.APIPropagation
	for i := range props {
		p := &props[i]
		if !chooses(p, rgd) {
			continue
		}
		if p.DeletionTimestamp.IsZero() {
			live = append(live, p)
		} else {
			deleting = append(deleting, p)
		}
	}
	for _, group := range [][]*flotillav1.APIPropagation{live, deleting} {
		if len(group) > 0 {
			sort.Slice(group, func(i, j int) bool { return group[i].Name < group[j].Name })
			return group[0]
		}
	}
	return nil
}

// PlacementOf is the Placement an APIPropagation names (spec.placementRef).
func PlacementOf(p *flotillav1.APIPropagation) client.ObjectKey {
	return client.ObjectKey{Namespace: p.Spec.PlacementRef.Namespace, Name: p.Spec.PlacementRef.Name}
}

// propagationsOf are the APIPropagations that name placement, from hub.
func propagationsOf(ctx context.Context, hub client.Reader, placement client.Object) []client.Object {
	return ownerkinds.PlacementUsers(ctx, hub, placement, &flotillav1.APIPropagationList{}, func(o client.Object) client.ObjectKey {
		return PlacementOf(o.(*flotillav1.APIPropagation))
	})
}

// selectorProblem says why an APIPropagation's RGD label selector is unusable, or "".
func selectorProblem(p *flotillav1.APIPropagation) string {
	if p.Spec.ResourceGraphDefinitions.LabelSelector == nil {
		return ""
	}
	if _, err := metav1.LabelSelectorAsSelector(p.Spec.ResourceGraphDefinitions.LabelSelector); err != nil {
		return "spec.resourceGraphDefinitions.labelSelector: " + err.Error()
	}
	return ""
}

// placementRefProblem says why an APIPropagation may not use the Placement it names, or "": a
// served API is a cluster-wide CRD on every chosen cluster.
func placementRefProblem(p *flotillav1.APIPropagation, admin []string) string {
	return ownerkinds.AdminPlacement("an APIPropagation", p.Spec.PlacementRef.Namespace, admin)
}

// RecordOwner is the ResourceGraphDefinition as an owner of Delivery records: the Placement it
// names is the one its placer (placerOf) names.
func RecordOwner() ledger.OwnerKind {
	return ledger.OwnerKind{
		New: func() client.Object { return &kro.ResourceGraphDefinition{} },
		Placement: func(ctx context.Context, hub client.Reader, rgd client.Object) (client.ObjectKey, error) {
			p, err := ServedBy(ctx, hub, rgd)
			if p == nil {
				return client.ObjectKey{}, err
			}
			return PlacementOf(p), nil
		},
	}
}
