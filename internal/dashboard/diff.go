package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/propagation"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// diffChange is one field that differs; values are already masked for a Secret (package plan).
type diffChange struct {
	Path, Live, Desired string
}

type diffItem struct {
	Object, Action, Reason, Manager string
	Changes                         []diffChange
}

type diffPage struct {
	Owner   ownerRef
	Cluster string
	Error   string
	Items   []diffItem
	Same    int
}

// diff compares what an owner wants on one cluster with what the cluster holds, with the
// machinery of `flotilla diff` (plan.DriftOf). It reads the owner and the spoke's credentials
// with the dashboard's own client; the viewer must be allowed to get the owner.
func (s *server) diff(v viewer, r *http.Request) (string, any, error) {
	ns := r.PathValue("namespace")
	if ns == "-" {
		ns = ""
	}
	o := ownerRef{Kind: r.PathValue("kind"), Namespace: ns, Name: r.PathValue("name")}
	page := diffPage{Owner: o, Cluster: r.PathValue("cluster")}
	recs := s.records(r.Context(), v, func(d *flotillav1.Delivery) bool {
		ro := refOf(d)
		return ro.Kind == o.Kind && ro.Namespace == o.Namespace && ro.Name == o.Name && d.Spec.Cluster == page.Cluster
	})
	if len(recs) == 0 {
		page.Error = "No delivery of " + o.String() + " to " + page.Cluster + " that you may read."
		return "diff", page, nil
	}
	page.Owner = refOf(recs[0])
	c, err := s.compareOn(r.Context(), page.Owner, page.Cluster)
	if err != nil {
		page.Error = err.Error()
		return "diff", page, nil
	}
	for _, it := range c.Items {
		if it.Action == plan.Unchanged && it.Reason == "" {
			page.Same++
			continue
		}
		item := diffItem{Object: it.Object, Action: string(it.Action), Reason: it.Reason, Manager: it.Manager}
		for _, ch := range it.Changes {
			item.Changes = append(item.Changes, diffChange{Path: ch.Path, Live: shown(ch.Old), Desired: shown(ch.New)})
		}
		page.Items = append(page.Items, item)
	}
	return "diff", page, nil
}

// compareOn runs plan.DriftOf for one owner on one cluster.
func (s *server) compareOn(ctx context.Context, o ownerRef, cluster string) (plan.Cluster, error) {
	d, err := s.desired(ctx, o)
	if err != nil {
		return plan.Cluster{}, err
	}
	for _, cd := range d.Clusters {
		if cd.Cluster != cluster {
			continue
		}
		cfg, err := inventory.SpokeConfig(ctx, s.hub, cluster)
		if err != nil {
			return plan.Cluster{}, fmt.Errorf("reach %s: %w", cluster, err)
		}
		spoke, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
		if err != nil {
			return plan.Cluster{}, err
		}
		c := plan.DriftOf(ctx, spoke, d, cd)
		return c, c.Err
	}
	return plan.Cluster{}, fmt.Errorf("%s no longer wants anything on %s", o, cluster)
}

// desired is what the owner wants on each of its clusters, from its package's Preview.
func (s *server) desired(ctx context.Context, o ownerRef) (*plan.Desired, error) {
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.Name}
	owners := flotillahub.RecordOwners()
	switch o.Kind {
	case "Propagation":
		p := &flotillav1.Propagation{}
		if err := s.hub.Get(ctx, key, p); err != nil {
			return nil, err
		}
		return propagation.Preview(ctx, s.hub, p, owners)
	case "ClusterPropagation":
		p := &flotillav1.ClusterPropagation{}
		if err := s.hub.Get(ctx, key, p); err != nil {
			return nil, err
		}
		return propagation.Preview(ctx, s.hub, p, owners)
	}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil || !transparent.IsOwnerKind(o.Kind) {
		return nil, fmt.Errorf("the dashboard does not compare owners of kind %s yet; use flotilla diff", o.Kind)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(o.Kind))
	if err := s.hub.Get(ctx, key, u); err != nil {
		return nil, err
	}
	return transparent.Preview(ctx, s.hub, u, owners)
}

// shown is a field's value on one line, bounded.
func shown(v any) string {
	if v == nil {
		return "(none)"
	}
	s := strings.ReplaceAll(fmt.Sprintf("%v", v), "\n", "\\n")
	if len(s) > 200 {
		s = s[:199] + "…"
	}
	return s
}
