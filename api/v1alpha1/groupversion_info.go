package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every Flotilla kind.
	GroupVersion = schema.GroupVersion{Group: "flotilla.dev", Version: "v1alpha1"}

	// SchemeBuilder registers Flotilla's kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder()

	// AddToScheme adds Flotilla's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// register adds kinds to SchemeBuilder, in GroupVersion.
func register(objects ...runtime.Object) {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, objects...)
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})
}
