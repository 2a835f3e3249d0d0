package dashboard

import (
	"context"
	"net/url"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ownerRef names an owner as a Delivery record does.
type ownerRef struct {
	APIVersion, Kind, Namespace, Name string
}

func refOf(d *flotillav1.Delivery) ownerRef {
	o := d.Spec.Owner
	return ownerRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Path is the owner page's URL path.
func (o ownerRef) Path() string {
	ns := o.Namespace
	if ns == "" {
		ns = "-"
	}
	return "/owners/" + url.PathEscape(o.Kind) + "/" + url.PathEscape(ns) + "/" + url.PathEscape(o.Name)
}

// String is how a page names the owner: Kind namespace/name.
func (o ownerRef) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// resource is the hub resource of the owner's kind, for the authorizer.
func (o ownerRef) resource() (group, resource string) {
	gv, _ := schema.ParseGroupVersion(o.APIVersion)
	switch o.Kind {
	case "Propagation", "ClusterPropagation", "APIPropagation":
		return flotillav1.GroupVersion.Group, strings.ToLower(o.Kind) + "s"
	case "HorizontalPodAutoscaler":
		return gv.Group, "horizontalpodautoscalers"
	}
	return gv.Group, strings.ToLower(o.Kind) + "s"
}

// visibleRecord says whether the viewer may see a record: they may list records in its
// namespace, and list its owner's kind in the owner's namespace (one question per namespace
// and kind, not per owner, so a page of a thousand owners asks a handful).
func visibleRecord(v viewer, d *flotillav1.Delivery) bool {
	if !v.canList("deliveries", d.Namespace) {
		return false
	}
	o := refOf(d)
	g, r := o.resource()
	return v.can(attrs{Verb: "list", Group: g, Resource: r, Namespace: o.Namespace})
}

// records returns the Delivery records the viewer may see, sorted by owner and cluster.
func (s *server) records(ctx context.Context, v viewer, match func(*flotillav1.Delivery) bool) []*flotillav1.Delivery {
	var list flotillav1.DeliveryList
	// The page only reads the records: the cache's own copies, not a copy of each.
	if err := s.store.list(ctx, "deliveries", &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []*flotillav1.Delivery
	for i := range list.Items {
		d := &list.Items[i]
		if (match == nil || match(d)) && visibleRecord(v, d) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := refOf(out[i]).String(), refOf(out[j]).String()
		if a != b {
			return a < b
		}
		return out[i].Spec.Cluster < out[j].Spec.Cluster
	})
	return out
}

// placementLink is a Placement as a page links to it; Name is empty when the viewer may not
// read it or it is gone.
type placementLink struct {
	Namespace, Name string
}

func (p placementLink) Path() string {
	return "/placements/" + url.PathEscape(p.Namespace) + "/" + url.PathEscape(p.Name)
}

// placements indexes the Placements the viewer may read by the label records name them with.
type placements map[string]placementLink

func (s *server) placementIndex(ctx context.Context, v viewer) placements {
	out := placements{}
	var list flotillav1.PlacementList
	if err := s.store.list(ctx, "placements", &list); err != nil {
		return out
	}
	for _, p := range list.Items {
		if v.canList("placements", p.Namespace) {
			out[ledger.PlacementLabelValue(client.ObjectKeyFromObject(&p))] = placementLink{Namespace: p.Namespace, Name: p.Name}
		}
	}
	return out
}

// of is the Placement a record names by its label; empty when the viewer may not read it.
func (p placements) of(d *flotillav1.Delivery) placementLink {
	return p[d.Labels[ledger.LabelPlacementRef]]
}

// ownerStatus is what the owner object itself says, where the store caches its kind.
type ownerStatus struct {
	Found      bool
	Conditions []metav1.Condition
	Results    map[string]*flotillav1.ClusterResult
	Rollout    *flotillav1.RolloutStatus
}

func (s *server) ownerStatus(ctx context.Context, o ownerRef) ownerStatus {
	var st *flotillav1.PropagationStatus
	switch o.Kind {
	case "Propagation":
		p := &flotillav1.Propagation{}
		if s.store.cached["propagations"] && s.store.reader.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, p) == nil {
			st = &p.Status
		}
	case "ClusterPropagation":
		p := &flotillav1.ClusterPropagation{}
		if s.store.cached["clusterpropagations"] && s.store.reader.Get(ctx, client.ObjectKey{Name: o.Name}, p) == nil {
			st = &p.Status
		}
	}
	if st == nil {
		return ownerStatus{}
	}
	out := ownerStatus{Found: true, Conditions: st.Conditions, Results: map[string]*flotillav1.ClusterResult{}, Rollout: st.Rollout}
	for i := range st.ClusterResults {
		out.Results[st.ClusterResults[i].Cluster] = &st.ClusterResults[i]
	}
	return out
}

// held says whether the owner's deliveries are held (its Applied condition says why).
func (st ownerStatus) held() bool {
	for _, c := range st.Conditions {
		if c.Type == flotillav1.PropagationApplied && c.Status == metav1.ConditionFalse {
			switch c.Reason {
			case flotillav1.ReasonPruneBlocked, flotillav1.ReasonPlacementPending, flotillav1.ReasonMoveStalled:
				return true
			}
		}
	}
	return false
}

// object is one delivered object of a record.
type object struct {
	Key      string // render.Key: group/Kind/namespace/name
	Describe string // as statuses name it: deployment.apps ns/name
	Name     string
}

// objectsOf lists a record's delivered objects, sorted.
func objectsOf(d *flotillav1.Delivery) []object {
	var out []object
	for _, group := range d.Status.Objects {
		for _, gvk := range render.ParseKinds([]string{group.Kind}) {
			for _, name := range group.Names {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				u.SetNamespace(group.Namespace)
				u.SetName(name)
				out = append(out, object{Key: gvk.Group + "/" + gvk.Kind + "/" + group.Namespace + "/" + name, Describe: decide.Describe(u), Name: name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Describe < out[j].Describe })
	return out
}
