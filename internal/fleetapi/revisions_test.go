package fleetapi

import (
	"context"
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// The history keeps what clusters serve and what the APIPropagation pins; for a cluster whose
// CRD cannot be read, what it was last seen serving, or every revision if it was never read
// since the start.
func TestRevisionsInUse(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	store := &revisions.Store{Hub: c, Metadata: c, Reader: c}
	owner := ownerOf("webapps")
	var names []string
	for _, hash := range []string{"h1", "h2", "h3"} {
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"v": hash}}}
		name, err := store.Save(context.Background(), ledger.Owner{Owner: owner}, hash, []*unstructured.Unstructured{obj}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	cases := []struct {
		name   string
		before map[string]clusterPlan // an earlier pass, if any
		plans  map[string]clusterPlan
		want   []string
	}{
		{"served", nil, map[string]clusterPlan{"a": {served: names[0]}, "b": {}}, []string{names[0]}},
		{"a cluster never read", nil, map[string]clusterPlan{"a": {served: names[0]}, "b": {unread: true}}, names},
		{"a cluster unread, last seen serving one", map[string]clusterPlan{"a": {served: names[0]}, "b": {served: names[2]}},
			map[string]clusterPlan{"a": {served: names[0]}, "b": {unread: true}}, []string{names[0], names[2]}},
		{"a cluster unread, last seen serving none", map[string]clusterPlan{"a": {served: names[0]}, "b": {}},
			map[string]clusterPlan{"a": {served: names[0]}, "b": {unread: true}}, []string{names[0]}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Revisions: store}
			reads := func(plans map[string]clusterPlan) map[string]clusterRead {
				out := map[string]clusterRead{}
				for c, p := range plans {
					out[c] = clusterRead{plan: p}
				}
				return out
			}
			if tc.before != nil {
				if _, err := r.revisionsInUse(context.Background(), owner, reads(tc.before)); err != nil {
					t.Fatal(err)
				}
			}
			keep, err := r.revisionsInUse(context.Background(), owner, reads(tc.plans))
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(keep)); !slices.Equal(got, slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
		})
	}
}
