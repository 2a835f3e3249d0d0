package cli

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/propagation"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// desiredOf computes what the owner an argument names wants on each of its clusters, with the
// owner package's own Preview: a Propagation or ClusterPropagation, a transparent-mode object
// (deployment/NAME, ...), an RGD (rgd/NAME), or every RGD an APIPropagation serves
// (apipropagation/NAME, one Desired each).
func desiredOf(ctx context.Context, hub client.Client, arg string, where scope, spokes *spokeClients) ([]*plan.Desired, error) {
	owners := flotillahub.RecordOwners()
	if word, name, found := strings.Cut(arg, "/"); found {
		if gvk, ok := transparentKind(word); ok {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			if err := hub.Get(ctx, client.ObjectKey{Namespace: where.namespace, Name: name}, u); err != nil {
				return nil, fmt.Errorf("%s %s/%s: %w", strings.ToLower(gvk.Kind), where.namespace, name, err)
			}
			return one(transparent.Preview(ctx, hub, u, owners))
		}
	}
	kind, name, err := statusKind(arg)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindRGD:
		return one(fleetapi.PreviewRGD(ctx, hub, name, spokes.get, owners))
	case kindAPIPropagation:
		if _, err := statusObjects(ctx, hub, kind, name, where); err != nil {
			return nil, err
		}
		return fleetapi.PreviewAPIs(ctx, hub, name, spokes.get, owners)
	}
	obj, err := getPropagator(ctx, hub, arg, where)
	if err != nil {
		return nil, err
	}
	return one(propagation.Preview(ctx, hub, obj, owners))
}

func one(d *plan.Desired, err error) ([]*plan.Desired, error) {
	if err != nil {
		return nil, err
	}
	return []*plan.Desired{d}, nil
}

// transparentKind resolves a kind written on the command line (kind, plural or kubectl's
// short name, any case) to one of the kinds transparent mode carries.
func transparentKind(word string) (schema.GroupVersionKind, bool) {
	word = strings.ToLower(word)
	short := map[string]string{"deploy": "deployment", "sts": "statefulset", "ds": "daemonset", "cm": "configmap", "svc": "service", "hpa": "horizontalpodautoscaler"}
	if long, ok := short[word]; ok {
		word = long
	}
	for _, gvk := range transparent.Kinds {
		kind := strings.ToLower(gvk.Kind)
		if word == kind || word == kind+"s" || word == kind+"."+gvk.Group {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// spokeClients reaches the clusters a plan looks at, once each, with the credentials the hub
// holds for them.
type spokeClients struct {
	hub    client.Reader
	byName map[string]spokeClient
}

type spokeClient struct {
	client client.Client
	config *rest.Config
	err    error
}

func newSpokeClients(hub client.Reader) *spokeClients {
	return &spokeClients{hub: hub, byName: map[string]spokeClient{}}
}

// get returns a client of the cluster, and its config (a fleetapi.SpokeFunc).
func (s *spokeClients) get(ctx context.Context, cluster string) (client.Client, *rest.Config, error) {
	if c, ok := s.byName[cluster]; ok {
		return c.client, c.config, c.err
	}
	var c spokeClient
	if c.config, c.err = inventory.SpokeConfig(ctx, s.hub, cluster); c.err == nil {
		c.client, c.err = client.New(c.config, client.Options{Scheme: install.Scheme()})
	}
	s.byName[cluster] = c
	return c.client, c.config, c.err
}
