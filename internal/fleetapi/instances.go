package fleetapi

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// InstanceCounter says how the instances of a kind on a cluster are doing; ok is false when
// that is not known now. The instances controller is one: it counts from its informers, so
// asking costs no API request.
type InstanceCounter interface {
	Counts(cluster string, kind schema.GroupVersionKind) (instances.Counts, bool)
}

// countsDelay is how long a change of instance counts waits before the status of the
// APIPropagation concerned is computed again: the changes of a burst of instance events are
// written together, once.
const countsDelay = 2 * time.Second

// InstancesChanged is told that the counts of a kind on a cluster may have changed (subscribe
// it to the instances controller): the APIPropagations serving that kind there have their
// status computed again, at most once per countsDelay each. It never blocks.
func (r *Reconciler) InstancesChanged(cluster string, kind schema.GroupVersionKind) {
	if r.states == nil {
		return
	}
	for _, placer := range r.states.placersOf(cluster, kind) {
		r.status.notifier.NotifyAfter(render.Owner{Name: placer}, countsDelay)
	}
}

// clusterInstances is how the instances of one API on one cluster are doing, as the status
// shows it.
type clusterInstances struct {
	counts   flotillav1.InstanceCounts
	notReady []flotillav1.NotReadyInstance
}

// instancesOf is how the instances of an API are doing on the clusters of its rows where they
// are watched. Where they are not known now (just after a start, or the cluster is not
// connected) while a CRD is served there, the status keeps what it showed: a restart writes
// nothing, and a cluster out of reach shows its last counts.
func (s *statusReconciler) instancesOf(p *flotillav1.APIPropagation, api string, st *apiState) map[string]clusterInstances {
	out := map[string]clusterInstances{}
	for _, row := range st.rows {
		if s.counter != nil {
			if c, ok := s.counter.Counts(row.Cluster, st.kind); ok {
				out[row.Cluster] = fromCounts(row.Cluster, c)
				continue
			}
		}
		if row.ServedGeneration == 0 {
			continue
		}
		if prev := previousInstances(p, row.Cluster, api); prev != nil {
			out[row.Cluster] = *prev
		}
	}
	return out
}

func fromCounts(cluster string, c instances.Counts) clusterInstances {
	ci := clusterInstances{counts: flotillav1.InstanceCounts{Total: int32(c.Total), Active: int32(c.Active),
		InProgress: int32(c.InProgress), Error: int32(c.Error), Deleting: int32(c.Deleting)}}
	for _, n := range c.NotReady {
		name := n.Name
		if n.Namespace != "" {
			name = n.Namespace + "/" + n.Name
		}
		ci.notReady = append(ci.notReady, flotillav1.NotReadyInstance{Cluster: cluster, Instance: name, State: n.State, Reason: n.Reason, Message: n.Message})
	}
	return ci
}

// previousInstances is what p's status shows of an API's instances on a cluster, nil if nothing.
func previousInstances(p *flotillav1.APIPropagation, cluster, api string) *clusterInstances {
	var prev *clusterInstances
	for _, row := range p.Status.ClusterResults {
		if row.Cluster == cluster && row.API == api && row.Instances != nil {
			prev = &clusterInstances{counts: *row.Instances}
		}
	}
	if prev == nil {
		return nil
	}
	for _, a := range p.Status.APIs {
		if a.Name != api {
			continue
		}
		for _, n := range a.NotReady {
			if n.Cluster == cluster {
				prev.notReady = append(prev.notReady, n)
			}
		}
	}
	return prev
}

// addCounts adds c to *sum, allocating it on first use.
func addCounts(sum **flotillav1.InstanceCounts, c flotillav1.InstanceCounts) {
	if *sum == nil {
		*sum = &flotillav1.InstanceCounts{}
	}
	s := *sum
	s.Total += c.Total
	s.Active += c.Active
	s.InProgress += c.InProgress
	s.Error += c.Error
	s.Deleting += c.Deleting
}
