package fleetapi

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
)

// fakeCounter knows the counts of some clusters.
type fakeCounter map[string]instances.Counts

func (f fakeCounter) Counts(cluster string, _ schema.GroupVersionKind) (instances.Counts, bool) {
	c, ok := f[cluster]
	return c, ok
}

func failing(n int, prefix string) []instances.NotReady {
	var out []instances.NotReady
	for i := range n {
		out = append(out, instances.NotReady{Namespace: "team", Name: fmt.Sprintf("%s%d", prefix, i), State: "ERROR", Reason: "ResourcesNotReady", Message: "no"})
	}
	return out
}

func TestStatusCountsInstances(t *testing.T) {
	p := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform", Generation: 1}}
	web := apiState{placer: "platform", generation: 1, targets: []string{"a", "b", "c"}, rows: []flotillav1.APIClusterResult{
		{Cluster: "a", API: "web", Phase: flotillav1.APIServing, ServedGeneration: 1},
		{Cluster: "b", API: "web", Phase: flotillav1.APIServing, ServedGeneration: 1},
		{Cluster: "c", API: "web", Phase: flotillav1.APICompileFailed},
	}}
	s := &statusReconciler{counter: fakeCounter{
		"a": {Total: 4, Active: 1, Error: 3, NotReady: failing(3, "a")},
		"b": {Total: 5, Active: 1, InProgress: 2, Deleting: 2, NotReady: failing(4, "b")},
	}}
	view := func() []apiView {
		return []apiView{{result: flotillav1.APIResult{Name: "web"}, state: &web, instances: s.instancesOf(p, "web", &web)}}
	}
	st := buildStatus(p, nil, view())
	want := flotillav1.InstanceCounts{Total: 9, Active: 2, InProgress: 2, Error: 3, Deleting: 2}
	if st.Instances == nil || *st.Instances != want {
		t.Fatalf("status.instances %+v, want %+v", st.Instances, want)
	}
	if api := st.APIs[0]; api.Instances == nil || *api.Instances != want {
		t.Errorf("apis[web].instances %+v", api.Instances)
	}
	if r := resultIn(st, "a"); r.Instances == nil || r.Instances.Total != 4 || r.Instances.Error != 3 {
		t.Errorf("a: %+v", r.Instances)
	}
	if r := resultIn(st, "c"); r.Instances != nil {
		t.Errorf("c, where nothing is known, shows %+v", r.Instances)
	}
	notReady := st.APIs[0].NotReady
	if len(notReady) != instances.MaxNotReady || notReady[0].Cluster != "a" || notReady[0].Instance != "team/a0" || notReady[4].Instance != "team/b1" {
		t.Errorf("not ready %+v: want the first 5, in cluster order", notReady)
	}

	// Counts not known now (after a restart, before the informers sync) keep what the status
	// shows where a CRD is served: nothing is written.
	p.Status = st
	s.counter = fakeCounter{}
	if again := buildStatus(p, nil, view()); !equality.Semantic.DeepEqual(again, st) {
		t.Errorf("unknown counts changed the status:\n%+v\nwas\n%+v", again, st)
	}
	// Without a counter nothing is shown.
	p.Status = flotillav1.APIPropagationStatus{}
	s.counter = nil
	if st := buildStatus(p, nil, view()); st.Instances != nil || st.APIs[0].Instances != nil || st.APIs[0].NotReady != nil {
		t.Errorf("counts without a counter: %+v", st)
	}
}

func resultIn(st flotillav1.APIPropagationStatus, cluster string) flotillav1.APIClusterResult {
	for _, r := range st.ClusterResults {
		if r.Cluster == cluster {
			return r
		}
	}
	return flotillav1.APIClusterResult{}
}

func TestPlacersOf(t *testing.T) {
	s := newStates()
	web := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	s.set("web", apiState{placer: "platform", kind: web, rows: []flotillav1.APIClusterResult{{Cluster: "a"}}})
	s.set("other", apiState{placer: "other", kind: schema.GroupVersionKind{Kind: "Queue"}, rows: []flotillav1.APIClusterResult{{Cluster: "a"}}})
	if got := s.placersOf("a", web); len(got) != 1 || got[0] != "platform" {
		t.Errorf("placers of WebApp on a: %v", got)
	}
	if got := s.placersOf("b", web); len(got) != 0 {
		t.Errorf("placers of WebApp on b: %v", got)
	}
}
