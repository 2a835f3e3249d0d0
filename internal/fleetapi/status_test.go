package fleetapi

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func row(cluster, api string, phase flotillav1.APIPhase, reason string) flotillav1.APIClusterResult {
	return flotillav1.APIClusterResult{Cluster: cluster, API: api, Phase: phase, Reason: reason}
}

func TestBuildStatus(t *testing.T) {
	p := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform", Generation: 3}}
	targets := []string{"a", "b", "c"}
	web := apiState{placer: "platform", generation: 2, targets: targets, rows: []flotillav1.APIClusterResult{
		row("a", "web", flotillav1.APIServing, ""), row("b", "web", flotillav1.APIServing, ""), row("c", "web", flotillav1.APIServing, ""),
	}}
	queue := apiState{placer: "platform", generation: 1, targets: targets, rows: []flotillav1.APIClusterResult{
		row("a", "queue", flotillav1.APIServing, ""), row("b", "queue", flotillav1.APIServing, ""),
		row("c", "queue", flotillav1.APICompileFailed, flotillav1.ReasonSchemaNotFound),
		row("d", "queue", flotillav1.APIRemoving, "Orphan"),
	}}
	views := []apiView{
		{result: flotillav1.APIResult{Name: "queue"}, state: &queue},
		{result: flotillav1.APIResult{Name: "taken", Message: "served by APIPropagation a-first"}},
		{result: flotillav1.APIResult{Name: "web"}, state: &web},
	}
	st := buildStatus(p, nil, views)
	if st.APICount != 2 || st.TargetClusters != 3 || st.ServingClusters != 2 || st.FailedClusters != 1 {
		t.Fatalf("counts: apis %d, targets %d, serving %d, failed %d; want 2, 3, 2, 1", st.APICount, st.TargetClusters, st.ServingClusters, st.FailedClusters)
	}
	if first := st.ClusterResults[0]; first.Cluster != "c" || first.API != "queue" {
		t.Errorf("failures are not first: %+v", st.ClusterResults)
	}
	if len(st.ClusterResults) != 7 {
		t.Errorf("%d cluster results, want 7 (the removed cluster included)", len(st.ClusterResults))
	}
	if st.APIs[0].Name != "queue" || st.APIs[0].ServingClusters != 2 || st.APIs[0].FailedClusters != 1 {
		t.Errorf("queue: %+v", st.APIs[0])
	}
	accepted := meta.FindStatusCondition(st.Conditions, flotillav1.APIPropagationAccepted)
	serving := meta.FindStatusCondition(st.Conditions, flotillav1.APIPropagationServing)
	if accepted == nil || accepted.Status != metav1.ConditionTrue || accepted.ObservedGeneration != 3 {
		t.Errorf("Accepted %+v", accepted)
	}
	if serving == nil || serving.Reason != flotillav1.ReasonCompileFailed || !strings.HasPrefix(serving.Message, "c: queue: ") {
		t.Errorf("Serving %+v", serving)
	}

	// The same inputs give the same status: nothing is written again.
	p.Status = st
	if again := buildStatus(p, nil, views); !equality.Semantic.DeepEqual(again, st) {
		t.Error("an unchanged input changed the status")
	}

	queue.rows[2] = row("c", "queue", flotillav1.APIServing, "")
	st = buildStatus(p, nil, views)
	if serving := meta.FindStatusCondition(st.Conditions, flotillav1.APIPropagationServing); serving.Status != metav1.ConditionFalse || serving.Reason != flotillav1.ReasonProgressing {
		t.Errorf("a removal under way: Serving %+v, want Progressing", serving)
	}
	queue.rows = queue.rows[:3]
	st = buildStatus(p, nil, views)
	if serving := meta.FindStatusCondition(st.Conditions, flotillav1.APIPropagationServing); serving.Status != metav1.ConditionTrue || st.ServingClusters != 3 {
		t.Errorf("all served: Serving %+v, serving clusters %d", serving, st.ServingClusters)
	}

	st = buildStatus(p, &condition{flotillav1.ReasonPlacementNotFound, "Placement x does not exist"}, views)
	if serving := meta.FindStatusCondition(st.Conditions, flotillav1.APIPropagationServing); serving.Reason != flotillav1.ReasonNotAccepted {
		t.Errorf("without a Placement: Serving %+v", serving)
	}
	st = buildStatus(p, nil, views[1:2])
	if accepted := meta.FindStatusCondition(st.Conditions, flotillav1.APIPropagationAccepted); accepted.Reason != flotillav1.ReasonNothingSelected {
		t.Errorf("nothing served: Accepted %+v", accepted)
	}
}

func TestBuildStatusIsBounded(t *testing.T) {
	p := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}}
	var targets []string
	for i := 0; i < 600; i++ {
		targets = append(targets, fmt.Sprintf("c%04d", i))
	}
	var views []apiView
	for _, api := range []string{"one", "two"} {
		st := apiState{placer: "platform", targets: targets}
		for _, c := range targets {
			st.rows = append(st.rows, row(c, api, flotillav1.APIServing, ""))
		}
		views = append(views, apiView{result: flotillav1.APIResult{Name: api}, state: &st})
	}
	views[1].state.rows[599] = row("c0599", "two", flotillav1.APIBlocked, flotillav1.ReasonBreakingChange)
	st := buildStatus(p, nil, views)
	if len(st.ClusterResults) != maxClusterResults {
		t.Fatalf("%d cluster results, want %d", len(st.ClusterResults), maxClusterResults)
	}
	if st.ClusterResults[0].Phase != flotillav1.APIBlocked {
		t.Errorf("the failure was cut: first %+v", st.ClusterResults[0])
	}
	if st.TargetClusters != 600 || st.ServingClusters != 599 || st.FailedClusters != 1 {
		t.Errorf("counts %d/%d/%d do not cover every cluster", st.TargetClusters, st.ServingClusters, st.FailedClusters)
	}
}
