package division

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// Fit is how many replicas of a workload a cluster could schedule when some stayed
// Unschedulable there, and what the cluster could allocate then.
type Fit struct {
	Replicas    int32
	Allocatable corev1.ResourceList
}

// Holds reports whether the fit still applies to a cluster that can now allocate room (in
// the units of Usage): only while its allocatable resources are unchanged, since Nodes added
// or removed make the old finding meaningless.
func (f Fit) Holds(room map[string]int64) bool {
	return maps.Equal(map[string]int64(UsageFrom(f.Allocatable)), room)
}
