package cli

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// ownerArg is an owner named on the command line: [KIND/]NAME, a bare NAME being a
// Propagation's. flotilla plan, diff and rollout read it the same way.
type ownerArg struct {
	kind objectKind // kindTransparent for a transparent-mode object (gvk says which kind)
	gvk  schema.GroupVersionKind
	name string
}

// kindTransparent is a transparent-mode object's kind, as ownerArg holds it.
const kindTransparent objectKind = "transparent"

// parseOwnerArg reads an owner argument: a transparent-mode kind (deployment/NAME, cm/NAME,
// ...) or one statusKind knows (propagation, clusterpropagation, placement, rgd,
// apipropagation).
func parseOwnerArg(arg string) (ownerArg, error) {
	if word, name, found := strings.Cut(arg, "/"); found {
		if gvk, ok := transparentKind(word); ok {
			if name == "" {
				return ownerArg{}, usageError(fmt.Errorf("%q names no object: want %s/NAME", arg, word))
			}
			return ownerArg{kind: kindTransparent, gvk: gvk, name: name}, nil
		}
	}
	kind, name, err := statusKind(arg)
	if err != nil {
		return ownerArg{}, err
	}
	return ownerArg{kind: kind, name: name}, nil
}

// getTransparent reads the transparent-mode object an ownerArg names.
func getTransparent(ctx context.Context, hub client.Reader, o ownerArg, namespace string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.gvk)
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: o.name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, hintedError{msg: fmt.Sprintf("%s %s/%s not found on the hub; list them with: kubectl get %ss -n %s (or pass -n NAMESPACE)",
				strings.ToLower(o.gvk.Kind), namespace, o.name, strings.ToLower(o.gvk.Kind), namespace), err: err}
		}
		return nil, fmt.Errorf("%s %s/%s: %w", strings.ToLower(o.gvk.Kind), namespace, o.name, err)
	}
	return u, nil
}

// desiredOf computes what the owner an argument names wants on each of its clusters, with the
// owner package's own Preview: a Propagation or ClusterPropagation, a transparent-mode object
// (deployment/NAME, ...), an RGD (rgd/NAME), or every RGD an APIPropagation serves
// (apipropagation/NAME, one Desired each).
func desiredOf(ctx context.Context, hub client.Client, arg string, where scope, spokes *spokeClients) ([]*plan.Desired, error) {
	owners := flotillahub.RecordOwners()
	o, err := parseOwnerArg(arg)
	if err != nil {
		return nil, err
	}
	switch o.kind {
	case kindTransparent:
		u, err := getTransparent(ctx, hub, o, where.namespace)
		if err != nil {
			return nil, err
		}
		return one(transparent.Preview(ctx, hub, u, owners))
	case kindRGD:
		return one(fleetapi.PreviewRGD(ctx, hub, o.name, spokes.get, owners))
	case kindAPIPropagation:
		if _, err := statusObjects(ctx, hub, o.kind, o.name, where); err != nil {
			return nil, err
		}
		return fleetapi.PreviewAPIs(ctx, hub, o.name, spokes.get, owners)
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
