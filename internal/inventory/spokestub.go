package inventory

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// annotationStub marks an object the spoke cache holds as a stub: its name, namespace, owner
// label and Flotilla's markers only (see spokeCache). Readers go to the spoke for the rest
// (stubReadingCache). It exists in the cache only, never on a spoke.
const annotationStub = "flotilla.dev/cache-stub"

// Stubs keep an object's labels when they are small (kro's instance labels route a child's
// events to its instance), only the owner label otherwise, and Flotilla's annotations when they
// are of the size Flotilla writes: a stub costs a few hundred bytes whatever its object holds.
const (
	stubLabelBytes      = 1 << 10
	stubAnnotationBytes = 512
)

// isStub reports whether an object read from a spoke cache is a stub.
func isStub(o client.Object) bool {
	return annotation(o, annotationStub) == "true"
}

// annotation reads one annotation without copying an unstructured object's map, as
// GetAnnotations does: every read of the cache asks.
func annotation(o client.Object, key string) string {
	if u, ok := o.(*unstructured.Unstructured); ok {
		v, _, _ := unstructured.NestedString(u.Object, "metadata", "annotations", key)
		return v
	}
	return o.GetAnnotations()[key]
}

// label reads one label the same way.
func label(o client.Object, key string) string {
	if u, ok := o.(*unstructured.Unstructured); ok {
		v, _, _ := unstructured.NestedString(u.Object, "metadata", "labels", key)
		return v
	}
	return o.GetLabels()[key]
}

// stubOf returns the stub of a spoke object: what lookups by name and owner label need.
func stubOf(o client.Object) client.Object {
	var s client.Object
	if u, ok := o.(*unstructured.Unstructured); ok {
		su := &unstructured.Unstructured{Object: map[string]any{}}
		su.SetAPIVersion(u.GetAPIVersion())
		su.SetKind(u.GetKind())
		s = su
	} else {
		s = reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
		s.GetObjectKind().SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	}
	s.SetName(o.GetName())
	s.SetNamespace(o.GetNamespace())
	s.SetUID(o.GetUID())
	s.SetResourceVersion(o.GetResourceVersion())
	s.SetLabels(stubLabels(o.GetLabels()))
	annotations := map[string]string{annotationStub: "true"}
	for _, k := range []string{flotillav1.AnnotationOwner, flotillav1.AnnotationHash} {
		if v, ok := o.GetAnnotations()[k]; ok && len(v) <= stubAnnotationBytes {
			annotations[k] = v
		}
	}
	s.SetAnnotations(annotations)
	return s
}

func stubLabels(l map[string]string) map[string]string {
	n := 0
	for k, v := range l {
		n += len(k) + len(v)
	}
	if n <= stubLabelBytes {
		return l
	}
	return map[string]string{flotillav1.LabelOwner: l[flotillav1.LabelOwner]}
}

// unmarkStub removes a stub mark from an object kept whole (one a spoke user wrote there would
// only cost reads, but a cache copy should say what it is).
func unmarkStub(o client.Object) {
	if annotation(o, annotationStub) == "" {
		return
	}
	a := o.GetAnnotations()
	delete(a, annotationStub)
	o.SetAnnotations(a)
}
