package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestPrintClusters(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	list := &flotillav1.ClusterList{Items: []flotillav1.Cluster{{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute)),
			Labels: map[string]string{"region": "eu-west", flotillav1.LabelClusterID: "uid"}},
		Status: flotillav1.ClusterStatus{
			Conditions:        []metav1.Condition{{Type: flotillav1.ClusterReady, Status: metav1.ConditionTrue, Reason: flotillav1.ReasonProbed}},
			KubernetesVersion: "v1.34.1", NodeCount: 3,
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("48Gi"), corev1.ResourcePods: resource.MustParse("330")},
		},
	}, {
		ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: metav1.NewTime(now.Add(-5 * time.Second))},
	}}}
	tests := []struct {
		output string
		want   []string
		not    []string
	}{
		{"", []string{"NAME", "eu-1", "True", "v1.34.1", "3", "12", "48Gi", "90m", "new", "Unknown", "<none>"}, []string{"PODS", "uid"}},
		{"wide", []string{"PODS", "330", "Probed", "region=eu-west"}, []string{"cluster-id"}},
		{"yaml", []string{"kind: Cluster", "apiVersion: flotilla.dev/v1alpha1", "kubernetesVersion: v1.34.1"}, nil},
		{"json", []string{`"kind": "Cluster"`, `"nodeCount": 3`}, nil},
	}
	for _, tt := range tests {
		t.Run("output="+tt.output, func(t *testing.T) {
			var b bytes.Buffer
			if err := printClusters(&b, list.DeepCopy(), tt.output, now); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("output has %q:\n%s", n, b.String())
				}
			}
		})
	}
	var b bytes.Buffer
	if err := printClusters(&b, &flotillav1.ClusterList{}, "", now); err != nil || !strings.Contains(b.String(), "flotilla join") {
		t.Fatalf("empty list output %q, %v", b.String(), err)
	}
}

func TestParseLabels(t *testing.T) {
	got, err := parseLabels([]string{"region=eu-west", "example.com/tier=gold", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	if got["region"] != "eu-west" || got["example.com/tier"] != "gold" || got["empty"] != "" || len(got) != 3 {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"novalue", "bad key=x", "k=bad value", "-k=v"} {
		if _, err := parseLabels([]string{bad}); err == nil || !strings.Contains(err.Error(), "--label") {
			t.Errorf("parseLabels(%q) error = %v", bad, err)
		}
	}
}
