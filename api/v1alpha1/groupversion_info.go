package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every Flotilla kind.
	GroupVersion = schema.GroupVersion{Group: "flotilla.dev", Version: "v1alpha1"}

	// SchemeBuilder registers Flotilla's kinds with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds Flotilla's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
