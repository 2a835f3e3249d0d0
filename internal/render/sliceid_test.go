package render

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestIDOfIsTheSameSliceOnly(t *testing.T) {
	objs := []*unstructured.Unstructured{{}, {}, {}}
	same := objs
	if IDOf(objs) != IDOf(same) {
		t.Error("one slice, two IDs")
	}
	if IDOf(objs) == IDOf(objs[:2]) {
		t.Error("a shorter slice of the same array has the same ID")
	}
	if IDOf(objs) == IDOf(append([]*unstructured.Unstructured(nil), objs...)) {
		t.Error("a copy of the same objects has the same ID")
	}
	if IDOf(nil) != IDOf(objs[:0]) {
		t.Error("two empty slices have different IDs")
	}
}
