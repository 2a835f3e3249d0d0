package render

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// SliceID identifies a slice of objects by its backing array and length: two slices with the
// same ID hold the same objects, as long as neither is changed once made (a pass's slices
// never are). Every empty slice has the same ID. It is comparable: a map key.
type SliceID struct {
	first **unstructured.Unstructured
	n     int
}

// IDOf is objs' SliceID.
func IDOf(objs []*unstructured.Unstructured) SliceID {
	if len(objs) == 0 {
		return SliceID{}
	}
	return SliceID{first: &objs[0], n: len(objs)}
}
