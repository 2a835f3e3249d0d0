package ownerkinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Controller is what the hub needs of the controller of an owner kind: to be told when an
// owner's delivery results changed, and of each drift its deliveries find. Deliver workers call
// both; neither may block.
type Controller interface {
	Notify(owner render.Owner)
	RecordDrift(owner render.Owner, cluster string, d deliver.Drift)
}

// Kind is one hub kind whose objects own what Flotilla delivers.
type Kind struct {
	// Name is the kind as its owners name it (render.Owner.Kind): what delivery results and
	// drift come back with, and the owner label's prefix on spokes.
	Name string
	// Record says how a Delivery record names an owner of this kind, and the Placement it uses.
	Record ledger.OwnerKind
	// Owner is the owner an object of the kind is, and whether it owns deliveries now.
	Owner func(client.Object) (render.Owner, bool)
	// Controller is told of its owners' results and drift; nil where only records and owners
	// are needed (a command that reads the ledger).
	Controller Controller
}

// Registry is the hub's owner kinds, by Name.
type Registry struct {
	kinds  []Kind
	byName map[string]Kind
}

// New makes the registry of kinds. Two kinds of one Name are a programming error.
func New(kinds ...Kind) *Registry {
	r := &Registry{kinds: kinds, byName: make(map[string]Kind, len(kinds))}
	for _, k := range kinds {
		if _, dup := r.byName[k.Name]; dup {
			panic(fmt.Sprintf("owner kind %q is registered twice", k.Name))
		}
		r.byName[k.Name] = k
	}
	return r
}

// Kinds are the registered kinds, in the order given.
func (r *Registry) Kinds() []Kind { return r.kinds }

// Notify tells the controller of owner's kind that its delivery results changed. An owner of no
// registered kind, or of one without a controller, is dropped: nothing would act on it.
func (r *Registry) Notify(owner render.Owner) {
	if c := r.controllerOf(owner); c != nil {
		c.Notify(owner)
	}
}

// RecordDrift tells the controller of owner's kind of a drift on cluster, as Notify does.
func (r *Registry) RecordDrift(owner render.Owner, cluster string, d deliver.Drift) {
	if c := r.controllerOf(owner); c != nil {
		c.RecordDrift(owner, cluster, d)
	}
}

func (r *Registry) controllerOf(owner render.Owner) Controller {
	return r.byName[owner.Kind].Controller
}

// RecordOwners are the kinds Delivery records may belong to, by the group and kind scheme knows
// their objects as, and the Placement each names (ledger.Trust). Every kind's object must be in
// scheme.
func (r *Registry) RecordOwners(scheme *runtime.Scheme) ledger.Owners {
	out := ledger.Owners{}
	for _, k := range r.kinds {
		gvk, err := apiutil.GVKForObject(k.Record.New(), scheme)
		if err != nil {
			panic(err) // every owner kind is registered in the hub's scheme
		}
		out[gvk.GroupKind()] = k.Record
	}
	return out
}
