package deliver

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCountUnschedulable(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	pod := func(node string, reason string, since time.Duration) corev1.Pod {
		p := corev1.Pod{Spec: corev1.PodSpec{NodeName: node}}
		if reason != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason,
				LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		}
		return p
	}
	pods := []corev1.Pod{
		pod("node-1", "", 0), // running
		pod("", corev1.PodReasonUnschedulable, 90*time.Second),
		pod("", corev1.PodReasonUnschedulable, 60*time.Second), // exactly at the line
		pod("", corev1.PodReasonUnschedulable, 50*time.Second), // 10 s to go
		pod("", corev1.PodReasonUnschedulable, 30*time.Second), // 30 s to go
		pod("", "SchedulingGated", 5*time.Minute),              // gated, not out of room
	}
	n, recheck := countUnschedulable(pods, time.Minute, now)
	if n != 2 || recheck != 10*time.Second {
		t.Errorf("counted %d, recheck in %s; want 2 and 10s", n, recheck)
	}
	if n, recheck := countUnschedulable(pods[:1], time.Minute, now); n != 0 || recheck != 0 {
		t.Errorf("no Pending pod: %d, %s", n, recheck)
	}
}
