package render

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Managed reports whether an object's labels mark it as delivered by Flotilla: it carries the
// owner label, which every delivered object has. Objects written by releases that also set
// the managed-by label count too when only that label is left (its owner label removed on the
// cluster), so an upgrade neither orphans them nor lets a second owner take them.
func Managed(l map[string]string) bool {
	return l[flotillav1.LabelOwner] != "" || l[flotillav1.LabelManagedBy] == flotillav1.ManagedByValue
}

// ManagedSelector selects the objects Flotilla delivered, those of earlier releases included
// (they carry the owner label as well as the managed-by label): what spoke caches hold.
func ManagedSelector() labels.Selector {
	req, err := labels.NewRequirement(flotillav1.LabelOwner, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	return labels.NewSelector().Add(*req)
}
