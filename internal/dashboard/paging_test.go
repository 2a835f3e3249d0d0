package dashboard

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// A long list is shown a page at a time, with links to the pages around it.
func TestFleetPages(t *testing.T) {
	var objs []client.Object
	for i := range pageSize + 50 {
		objs = append(objs, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-%04d", i)}})
	}
	s, _ := testServer(t, objs...)
	_, first := get(t, s.handler(), "/", "admin-token")
	if n := strings.Count(first, "<tr data-cluster="); n != pageSize || !strings.Contains(first, "250 clusters") || !strings.Contains(first, `href="/?page=2"`) || strings.Contains(first, "c-0200") {
		t.Errorf("first page: %d rows\n%s", n, first)
	}
	_, second := get(t, s.handler(), "/?page=2", "admin-token")
	if n := strings.Count(second, "<tr data-cluster="); n != 50 || !strings.Contains(second, "Rows 201–250 of 250") || !strings.Contains(second, `href="/?page=1"`) || strings.Contains(second, "c-0199") {
		t.Errorf("second page: %d rows\n%s", n, second)
	}
}
