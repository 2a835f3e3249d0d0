package transparent

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The fleet-wide counts of a divided workload, against what is desired.
//
// During a move or a failover more copies run than the division wants: a cluster that is to
// run fewer replicas keeps them until the others are Ready (make before break), and a failed-over
// cluster keeps its copy, which its last known status still counts, until it answers again. A
// plain sum then showed `READY 12/8` on the hub: more ready than desired, which no single
// cluster's Deployment ever shows and which reads as a bug. So the counts of replicas that
// serve (fleetCounts) are counted on each cluster only up to what the current division wants
// there: its share (a failed-over or returning cluster's is 0), or, for a copy a cluster's HPA
// scales, its own spec.replicas where it has a share. status.replicas stays the sum of every
// copy's: it is what the fleet runs, and Kubernetes lets it exceed spec.replicas (a surge)
// too. The replicas beyond the division are not hidden: the condition FleetSurplus says how
// many are ready, and where.

// fleetCounts are the status counts of replicas that serve the workload (Deployment,
// StatefulSet, ReplicaSet), counted per cluster up to what the division wants there.
var fleetCounts = map[string]bool{
	"readyReplicas": true, "availableReplicas": true, "updatedReplicas": true,
	"currentReplicas": true, "fullyLabeledReplicas": true,
}

// conditionFleetSurplus is the hub object's condition that says how many ready replicas run
// beyond the division, and where; it is there only while some do.
const (
	conditionFleetSurplus = "FleetSurplus"
	reasonBeyondDivision  = "ReplicasBeyondDivision"
)

// wantedOn returns what the division wants of a copy's cluster, and whether the copy's counts
// are capped at it (only a divided workload's are).
func wantedOn(c spokeCopy, wanted map[string]int64) (int64, bool) {
	if wanted == nil {
		return 0, false
	}
	share := wanted[c.cluster]
	if _, scaled := c.obj.GetAnnotations()[flotillav1.AnnotationShare]; scaled && share > 0 {
		// The cluster's HPA sets its replicas between changes of the share.
		if n, found, _ := unstructured.NestedInt64(c.obj.Object, "spec", "replicas"); found {
			return max(n, share), true
		}
	}
	return share, true
}

// surplusCounter collects, per cluster, ready replicas beyond what the division wants there.
type surplusCounter struct {
	total  int64
	places []string
}

func (s *surplusCounter) add(cluster string, ready, want int64) {
	if ready <= want {
		return
	}
	s.total += ready - want
	s.places = append(s.places, cluster+" "+strconv.FormatInt(ready, 10)+" ready for a share of "+strconv.FormatInt(want, 10))
}

// condition is the FleetSurplus condition, nil when no cluster runs ready replicas beyond its share.
func (s *surplusCounter) condition() map[string]any {
	if s.total == 0 {
		return nil
	}
	sort.Strings(s.places)
	return map[string]any{"type": conditionFleetSurplus, "status": "True", "reason": reasonBeyondDivision,
		"message": fmt.Sprintf("%d ready replicas run beyond the division and are not counted in readyReplicas (%s): "+
			"a cluster that is to run fewer, or failed over, keeps its copy until the others are Ready or it answers again",
			s.total, strings.Join(s.places, ", "))}
}
