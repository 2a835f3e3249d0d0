package instances

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Memory tells its subscribers of every change of what a cluster serves, and of nothing else.
func TestMemoryNotifiesChanges(t *testing.T) {
	m := NewMemory()
	var told []string
	m.Subscribe(func(cluster string) { told = append(told, cluster) })
	kind := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Chain"}

	m.Unserve("a", kind) // nothing served: no change
	if len(m.Served("a")) != 0 {
		t.Fatal("served before anything was")
	}
	m.serveKind("a", kind, Graph{Revision: "r1"})
	m.serveKind("a", kind, Graph{Revision: "r1"}) // the same revision again
	m.serveKind("b", kind, Graph{Revision: "r1"})
	m.serveKind("a", kind, Graph{Revision: "r2"})
	if g, ok := m.Graph("a", kind); !ok || g.Revision != "r2" {
		t.Fatalf("graph on a = %+v %v, want revision r2", g, ok)
	}
	m.Unserve("a", kind)
	m.Unserve("a", kind)
	if _, ok := m.Graph("a", kind); ok {
		t.Fatal("still served on a")
	}
	if want := []string{"a", "b", "a", "a"}; !reflect.DeepEqual(told, want) {
		t.Fatalf("told %v, want %v", told, want)
	}
	if got := m.Served("b"); len(got) != 1 || got[0].Revision != "r1" {
		t.Fatalf("served on b: %+v", got)
	}
}
