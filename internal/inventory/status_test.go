package inventory

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestDesiredStatus(t *testing.T) {
	ready := observation{metav1.ConditionTrue, flotillav1.ReasonProbed, "ok"}
	unreachable := observation{metav1.ConditionUnknown, flotillav1.ReasonUnreachable, "refused"}
	caps := &capacity{nodes: 2, readyNodes: 2, allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))

	c := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 3}}
	first, changed := desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{}, t0)
	if !changed || first.LastProbeTime == nil || !first.LastProbeTime.Equal(&t0) || first.ObservedGeneration != 3 ||
		first.KubernetesVersion != "v1.34.1" || first.NodeCount != 2 {
		t.Fatalf("first status = %+v, changed=%v", first, changed)
	}

	c.Status = first
	if _, changed := desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{}, t1); changed {
		t.Fatal("the same observation caused a write: steady state must not write")
	}
	if _, changed := desiredStatus(c, snapshot{obs: ready}, placed{}, t1); changed {
		t.Fatal("a snapshot without version or capacity must keep the recorded ones, not write")
	}

	down, changed := desiredStatus(c, snapshot{obs: unreachable}, placed{}, t1)
	if !changed || !down.LastProbeTime.Equal(&t1) || down.KubernetesVersion != "v1.34.1" || down.NodeCount != 2 {
		t.Fatalf("unreachable status = %+v, changed=%v", down, changed)
	}
	if down.Conditions[0].Status != metav1.ConditionUnknown || down.Conditions[0].Reason != flotillav1.ReasonUnreachable {
		t.Fatalf("condition = %+v", down.Conditions[0])
	}

	c.Generation = 4
	if bumped, changed := desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{}, t1); !changed || bumped.ObservedGeneration != 4 {
		t.Fatal("a new generation must be recorded")
	}

	// A new count of placements is written, and is not a probe's finding.
	c.Status, _ = desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{}, t1)
	t2 := metav1.NewTime(t1.Add(time.Minute))
	counted, changed := desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{owners: 3}, t2)
	if !changed || counted.Placements != 3 || !counted.LastProbeTime.Equal(&t1) {
		t.Fatalf("placements: %+v, changed=%v", counted, changed)
	}
	c.Status = counted
	if _, changed := desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{owners: 3}, t2); changed {
		t.Fatal("an unchanged count of placements caused a write")
	}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	withCPU, changed := desiredStatus(c, snapshot{obs: ready, version: "v1.34.1", capacity: caps}, placed{owners: 3, requests: cpu}, t2)
	if !changed || !withCPU.Placed.Cpu().Equal(resource.MustParse("3")) || !withCPU.LastProbeTime.Equal(&t1) {
		t.Fatalf("placed requests: %+v, changed=%v", withCPU, changed)
	}
}

func TestDesiredStatusCredentials(t *testing.T) {
	ready := observation{metav1.ConditionTrue, flotillav1.ReasonProbed, "ok"}
	valid := observation{metav1.ConditionTrue, flotillav1.ReasonCredentialsValid, "valid until T"}
	renewed := observation{metav1.ConditionTrue, flotillav1.ReasonRenewed, "renewed"}
	noSecret := observation{metav1.ConditionFalse, flotillav1.ReasonSecretNotFound, "create it"}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1}}

	s, changed := desiredStatus(c, snapshot{obs: ready, credObs: valid}, placed{}, t0)
	cond := findCondition(s, flotillav1.ClusterCredentialsValid)
	if !changed || cond == nil || cond.Reason != flotillav1.ReasonCredentialsValid || cond.Message != "valid until T" {
		t.Fatalf("status = %+v", s)
	}
	c.Status = s
	if _, changed := desiredStatus(c, snapshot{obs: ready, credObs: valid}, placed{}, t0); changed {
		t.Fatal("the same verdict caused a write")
	}
	s, changed = desiredStatus(c, snapshot{obs: ready, credObs: renewed}, placed{}, t0)
	if cond := findCondition(s, flotillav1.ClusterCredentialsValid); !changed || cond.Reason != flotillav1.ReasonRenewed {
		t.Fatalf("renewal not recorded: %+v", s)
	}
	if r := findCondition(s, flotillav1.ClusterReady); r == nil || r.Status != metav1.ConditionTrue {
		t.Fatalf("Ready lost: %+v", s)
	}
	c.Status = s
	s, _ = desiredStatus(c, snapshot{obs: noSecret}, placed{}, t0)
	if cond := findCondition(s, flotillav1.ClusterCredentialsValid); cond != nil {
		t.Fatalf("unreadable credentials keep a CredentialsValid verdict: %+v", cond)
	}
}

func findCondition(s flotillav1.ClusterStatus, condType string) *metav1.Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == condType {
			return &s.Conditions[i]
		}
	}
	return nil
}
