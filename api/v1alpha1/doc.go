// Package v1alpha1 is Flotilla's API, group flotilla.dev, version v1alpha1: the objects users
// and operators create on the hub to describe the fleet and what runs on it.
//
// +kubebuilder:object:generate=true
// +groupName=flotilla.dev
package v1alpha1
