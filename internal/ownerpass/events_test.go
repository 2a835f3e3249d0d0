package ownerpass

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// stageObservations is how many stage durations of kind flotilla_rollout_stage_duration_seconds
// holds.
func stageObservations(t *testing.T, kind string) uint64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "flotilla_rollout_stage_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// TestStagesAreReportedOnceAndMeasured: a pass reports the stages that started or completed
// since the last one (from the gate's memory), once; a completed stage's duration is observed
// once; the per-cluster rows come with the result. A controller that remembers nothing of the
// owner (a restart) reports nothing of what it finds.
func TestStagesAreReportedOnceAndMeasured(t *testing.T) {
	owner := render.Owner{Kind: "StageTestKind", Namespace: "team", Name: "settings"}
	r := &Runner{}
	p := Pass{Placement: &flotillav1.Placement{Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{
		Stages: []flotillav1.RolloutStage{{Name: "canary", ClusterNames: []string{"a"}}}}}}}
	in := percluster.Input{Owner: owner, Placement: p.Placement, Chosen: []string{"a", "b"}, LatestName: "v1",
		Latest: percluster.Revision{Name: "v1"}, Facts: map[string]override.Cluster{"a": {Name: "a"}, "b": {Name: "b"}}}
	pass := func(running map[string]fanout.Running) Result {
		var res Result
		r.gate(context.Background(), p, in, running, &res)
		return res
	}
	said := func(res Result) string {
		rec := record.NewFakeRecorder(10)
		ReportStages(rec, &corev1.ConfigMap{}, res.Stages)
		close(rec.Events)
		var out []string
		for e := range rec.Events {
			out = append(out, e)
		}
		return strings.Join(out, "; ")
	}
	if res := pass(map[string]fanout.Running{"a": {Revision: "v1", Ready: true}, "b": {Revision: "v1", Ready: true}}); said(res) != "" {
		t.Fatalf("a complete rollout, first seen: %q, want nothing said", said(res))
	}
	in.LatestName, in.Latest.Name = "v2", "v2"
	res := pass(map[string]fanout.Running{"a": {Revision: "v1", Ready: true}, "b": {Revision: "v1", Ready: true}})
	if got := said(res); got != "Normal RolloutStageStarted stage canary started revision v2" {
		t.Fatalf("v2 rolls out: %q", got)
	}
	if row := res.RolloutClusters["a"]; row.State != flotillav1.RolloutClusterProgressing || row.Revision != "v2" || row.Stage != "canary" {
		t.Errorf("a's row %+v, want canary Progressing at v2", row)
	}
	if row := res.RolloutClusters["b"]; row.State != flotillav1.RolloutClusterPending || row.Revision != "v1" || row.Stage != flotillav1.RolloutRestStage {
		t.Errorf("b's row %+v, want rest Pending at v1", row)
	}
	if res = pass(map[string]fanout.Running{"a": {Revision: "v2"}, "b": {Revision: "v1", Ready: true}}); said(res) != "" {
		t.Fatalf("nothing moved: %q", said(res))
	}
	observed := stageObservations(t, owner.Kind)
	res = pass(map[string]fanout.Running{"a": {Revision: "v2", Ready: true}, "b": {Revision: "v1", Ready: true}})
	if got := said(res); !strings.HasPrefix(got, "Normal RolloutStageComplete stage canary completed revision v2") ||
		!strings.Contains(got, "Normal RolloutStageStarted stage rest started revision v2") {
		t.Fatalf("the canary is Ready: %q", got)
	}
	if n := stageObservations(t, owner.Kind); n != observed+1 {
		t.Errorf("%d stage durations observed, want 1", n-observed)
	}
	if res = pass(map[string]fanout.Running{"a": {Revision: "v2", Ready: true}, "b": {Revision: "v2"}}); said(res) != "" || stageObservations(t, owner.Kind) != observed+1 {
		t.Fatalf("nothing completed: %q, %d durations", said(res), stageObservations(t, owner.Kind)-observed)
	}
	r.Forget(owner) // as a restart forgets
	if res = pass(map[string]fanout.Running{"a": {Revision: "v2", Ready: true}, "b": {Revision: "v2", Ready: true}}); said(res) != "" || stageObservations(t, owner.Kind) != observed+1 {
		t.Fatalf("after a restart: %q, %d durations; want nothing said or measured", said(res), stageObservations(t, owner.Kind)-observed)
	}
}
