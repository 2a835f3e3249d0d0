package dashboard

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// bigOwner is one Propagation of objects ConfigMaps on clusters clusters, the first object
// drifted on the last cluster.
func bigOwner(clusters, objects int) []client.Object {
	names := make([]string, objects)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%04d", i)
	}
	objs := []client.Object{&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "all"}}}
	last := fmt.Sprintf("c-%04d", clusters-1)
	for c := range clusters {
		objs = append(objs, record("team-a", "big", fmt.Sprintf("c-%04d", c), "all", readyStatus("/v1/ConfigMap", "team-a", names...)))
	}
	return append(objs, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "big"}, Status: flotillav1.PropagationStatus{
		ClusterResults: []flotillav1.ClusterResult{{Cluster: last, Drifted: 1, DriftedObjects: []flotillav1.DriftedObject{{Object: "configmap team-a/cm-0000"}}}},
	}})
}

// A big matrix is shown a window at a time (pageSize objects × matrixCols clusters), each row
// with its object's tally on every cluster, and can keep only the objects with a problem.
func TestOwnerMatrixWindows(t *testing.T) {
	s, _ := testServer(t, bigOwner(matrixCols+10, pageSize+20)...)
	h := s.handler()
	_, first := get(t, h, "/owners/Propagation/team-a/big", "alice-token")
	if n := strings.Count(first, "<td data-object="); n != pageSize*matrixCols {
		t.Errorf("the first window has %d cells, want %d", n, pageSize*matrixCols)
	}
	for _, want := range []string{"220 objects on 60 clusters", "13199 Ready", "1 Drifted", "Rows 1–200 of 220", "Clusters 1–50 of 60", "cols=2", `1 Drifted</span> <span class="state state-ready">59 Ready`} {
		if !strings.Contains(first, want) {
			t.Errorf("the first window lacks %q", want)
		}
	}
	if strings.Contains(first, `data-state="Drifted"`) {
		t.Errorf("the drifted cell is on cluster 60, outside the first window of clusters")
	}
	_, second := get(t, h, "/owners/Propagation/team-a/big?cols=2", "alice-token")
	if n := strings.Count(second, "<td data-object="); n != pageSize*10 || !strings.Contains(second, `data-state="Drifted"`) || !strings.Contains(second, `data-cluster="c-0059"`) {
		t.Errorf("the second window of clusters has %d cells, or lacks the drifted cell or its cluster", n)
	}
	_, problems := get(t, h, "/owners/Propagation/team-a/big?problems=1", "alice-token")
	if n := strings.Count(problems, "<tr>\n<th scope=\"row\"><code>"); n != 1 || !strings.Contains(problems, "cm-0000") || !strings.Contains(problems, "show every object") {
		t.Errorf("the problems filter shows %d objects:\n%.2000s", n, problems)
	}
}
