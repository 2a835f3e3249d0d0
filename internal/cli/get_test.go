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

func testClusters(now time.Time) []flotillav1.Cluster {
	return []flotillav1.Cluster{{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute)), ResourceVersion: "5",
			Labels: map[string]string{"region": "eu-west", flotillav1.LabelClusterID: "uid"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "flotilla-manager", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "flotilla.dev/v1alpha1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{}}`)}}},
		Status: flotillav1.ClusterStatus{
			Conditions:        []metav1.Condition{{Type: flotillav1.ClusterReady, Status: metav1.ConditionTrue, Reason: flotillav1.ReasonProbed}},
			KubernetesVersion: "v1.34.1", NodeCount: 3,
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("48Gi"), corev1.ResourcePods: resource.MustParse("330")},
		},
	}, {
		ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: metav1.NewTime(now.Add(-5 * time.Second)), ResourceVersion: "6",
			Labels: map[string]string{"region": "us-east"}},
	}}
}

func TestPrintClusters(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		output string
		single bool
		want   []string
		not    []string
	}{
		{"", false, []string{"NAME", "eu-1", "True", "v1.34.1", "3", "12", "48Gi", "90m", "new", "Unknown", "<none>"}, []string{"PODS", "uid"}},
		{"wide", false, []string{"PODS", "330", "Probed", "region=eu-west"}, []string{"cluster-id"}},
		{"yaml", false, []string{"kind: List", "kind: Cluster", "apiVersion: flotilla.dev/v1alpha1", "kubernetesVersion: v1.34.1"}, []string{"managedFields", "flotilla-manager"}},
		{"json", false, []string{`"kind": "List"`, `"kind": "Cluster"`, `"nodeCount": 3`}, []string{"managedFields"}},
		{"json", true, []string{`"kind": "Cluster"`, `"nodeCount": 3`}, []string{`"List"`}},
		{"name", false, []string{"cluster.flotilla.dev/eu-1\ncluster.flotilla.dev/new\n"}, nil},
		{"jsonpath={.items[*].metadata.name}", false, []string{"eu-1 new"}, nil},
	}
	for _, tt := range tests {
		t.Run("output="+tt.output, func(t *testing.T) {
			var b bytes.Buffer
			p, err := objectPrinter(tt.output)
			if err != nil {
				t.Fatal(err)
			}
			clusters := testClusters(now)
			if tt.single {
				clusters = clusters[:1]
			}
			if p == nil {
				err = (&clusterTable{w: &b, wide: tt.output == "wide"}).print(now, clusters...)
			} else {
				err = clusterPrinter(&b, tt.output, p, tt.single, false)(clusters...)
			}
			if err != nil {
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
}

// TestPrintWatchedClusters: a watch prints each cluster alone, as kubectl get -w -o yaml does.
func TestPrintWatchedClusters(t *testing.T) {
	p, err := objectPrinter("yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	show := clusterPrinter(&b, "yaml", p, false, true)
	if err := show(testClusters(time.Now())...); err != nil {
		t.Fatal(err)
	}
	if err := show(testClusters(time.Now())[0]); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "kind: List") || strings.Count(s, "kind: Cluster\n") != 3 || strings.Count(s, "---\n") != 2 {
		t.Errorf("want three Clusters, each alone:\n%s", s)
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
