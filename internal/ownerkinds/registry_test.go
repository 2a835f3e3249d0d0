package ownerkinds

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// told remembers what a controller was told.
type told struct {
	notified []render.Owner
	drifted  []string
}

func (c *told) Notify(owner render.Owner) { c.notified = append(c.notified, owner) }

func (c *told) RecordDrift(owner render.Owner, cluster string, d deliver.Drift) {
	c.drifted = append(c.drifted, owner.Kind+"/"+owner.Name+"@"+cluster+": "+d.Object)
}

func kindOf(name string, newObject func() client.Object, c Controller) Kind {
	return Kind{Name: name, Record: ledger.OwnerKind{New: newObject}, Controller: c}
}

func TestRegistryRoutesByOwnerKind(t *testing.T) {
	props, apis := &told{}, &told{}
	reg := New(
		kindOf("Propagation", func() client.Object { return &flotillav1.Propagation{} }, props),
		kindOf("ClusterPropagation", func() client.Object { return &flotillav1.ClusterPropagation{} }, props),
		kindOf("APIs", func() client.Object { return &flotillav1.APIPropagation{} }, apis),
		kindOf("Quiet", func() client.Object { return &flotillav1.Placement{} }, nil),
	)
	web := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	base := render.Owner{Kind: "ClusterPropagation", Name: "base"}
	widgets := render.Owner{Kind: "APIs", Name: "widgets"}
	for _, o := range []render.Owner{web, base, widgets, {Kind: "Quiet", Name: "q"}, {Kind: "Unknown", Name: "u"}} {
		reg.Notify(o) // a kind without a controller, or unknown, is dropped
	}
	reg.RecordDrift(widgets, "eu-1", deliver.Drift{Object: "customresourcedefinition widgets.example.com"})
	reg.RecordDrift(render.Owner{Kind: "Unknown"}, "eu-1", deliver.Drift{})

	if len(props.notified) != 2 || props.notified[0] != web || props.notified[1] != base {
		t.Errorf("the propagation controller was told of %v", props.notified)
	}
	if len(apis.notified) != 1 || apis.notified[0] != widgets {
		t.Errorf("the fleet API controller was told of %v", apis.notified)
	}
	if want := "APIs/widgets@eu-1: customresourcedefinition widgets.example.com"; len(apis.drifted) != 1 || apis.drifted[0] != want {
		t.Errorf("drift told: %v, want [%s]", apis.drifted, want)
	}
	if len(props.drifted) != 0 {
		t.Errorf("drift of another kind reached the propagation controller: %v", props.drifted)
	}

	owners := reg.RecordOwners(install.Scheme())
	for _, gk := range []string{"Propagation.flotilla.dev", "ClusterPropagation.flotilla.dev", "APIPropagation.flotilla.dev", "Placement.flotilla.dev"} {
		found := false
		for k := range owners {
			found = found || k.String() == gk
		}
		if !found {
			t.Errorf("records of %s are not believed: %v", gk, owners)
		}
	}
}

func TestRegistryRefusesAKindTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a kind registered twice is accepted")
		}
	}()
	New(Kind{Name: "Propagation"}, Kind{Name: "Propagation"})
}
