package decide

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/drift"
)

// IgnoredFields returns the fields of desired that a delivery neither compares with the
// cluster's copy nor changes there, as that copy (live, nil when there is none) stands: the
// owner's ignoreFields for the kind, and spec.replicas of a divided workload an HPA scales on
// the cluster while the copy carries the share annotation desired carries. Flotilla wrote that
// share; the HPA has owned the replicas since. A new share (another division, a move) differs
// from the copy's, so it is written once, and the HPA takes over again from there.
func IgnoredFields(set drift.IgnoreSet, desired, live *unstructured.Unstructured) [][]string {
	ignore := set.For(desired.GetAPIVersion(), desired.GetKind())
	if share, ok := shareOf(desired); ok && live != nil {
		if liveShare, _ := shareOf(live); liveShare == share {
			ignore = append(ignore[:len(ignore):len(ignore)], []string{"spec", "replicas"})
		}
	}
	return ignore
}

// shareOf reads an object's share annotation without copying its annotations.
func shareOf(o *unstructured.Unstructured) (string, bool) {
	v, found, _ := unstructured.NestedString(o.Object, "metadata", "annotations", flotillav1.AnnotationShare)
	return v, found
}
