package fleetapi

import (
	"reflect"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// apiState is the latest pass over one RGD: what the status of the APIPropagation serving it
// shows of it.
type apiState struct {
	uid types.UID
	// placer is the APIPropagation whose pass it was.
	placer     string
	generation int64
	// kind is the kind of the RGD's instances.
	kind schema.GroupVersionKind
	// held says why nothing is delivered for the placer (its Placement is missing, or not in
	// an admin namespace); rows are empty then.
	held string
	// targets are the clusters the Placement chooses, sorted.
	targets []string
	// rows has one entry per target cluster and per cluster being removed, sorted by cluster.
	rows []flotillav1.APIClusterResult
}

// states holds the latest apiState of every RGD served. The RGD controller writes it after each
// pass; the status controller reads it to write each APIPropagation's status. It is memory
// only: after a restart the RGD controller's first passes fill it again, and the status
// controller waits for them rather than write an incomplete status.
type states struct {
	mu    sync.Mutex
	byRGD map[string]apiState
}

func newStates() *states { return &states{byRGD: map[string]apiState{}} }

// set records an RGD's state. It returns whether it changed and the placer of the state it
// replaced ("" if none).
func (s *states) set(rgd string, st apiState) (changed bool, previousPlacer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.byRGD[rgd]
	s.byRGD[rgd] = st
	return !ok || !reflect.DeepEqual(prev, st), prev.placer
}

// get returns an RGD's state.
func (s *states) get(rgd string) (apiState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byRGD[rgd]
	return st, ok
}

// drop forgets an RGD's state; it returns the state dropped.
func (s *states) drop(rgd string) (apiState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byRGD[rgd]
	delete(s.byRGD, rgd)
	return st, ok
}

// servingOn lists the RGDs whose pass targets a cluster.
func (s *states) servingOn(cluster string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, st := range s.byRGD {
		if slices.Contains(st.targets, cluster) {
			out = append(out, name)
		}
	}
	return out
}

// placedBy lists the RGDs whose latest pass was an APIPropagation's.
func (s *states) placedBy(placer string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, st := range s.byRGD {
		if st.placer == placer {
			out = append(out, name)
		}
	}
	return out
}

// placersOf lists the APIPropagations whose latest pass over an RGD of a kind has a row for a
// cluster: those whose status shows the kind's instances there.
func (s *states) placersOf(cluster string, kind schema.GroupVersionKind) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.byRGD {
		if st.kind == kind && !slices.Contains(out, st.placer) &&
			slices.ContainsFunc(st.rows, func(row flotillav1.APIClusterResult) bool { return row.Cluster == cluster }) {
			out = append(out, st.placer)
		}
	}
	return out
}
