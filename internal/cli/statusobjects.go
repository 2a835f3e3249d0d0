package cli

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// objectKind is a kind `flotilla status`, `plan` and `diff` read, as the CLI writes it.
type objectKind string

const (
	kindPropagation        objectKind = "propagation"
	kindClusterPropagation objectKind = "clusterpropagation"
	kindPlacement          objectKind = "placement"
	kindRGD                objectKind = "rgd"
	kindAPIPropagation     objectKind = "apipropagation"
)

func (k objectKind) namespaced() bool { return k == kindPropagation || k == kindPlacement }

// scope is where to look for an object of a namespaced kind: the namespace of -n (given, or
// the default), or with -A every namespace.
type scope struct {
	namespace string
	given     bool
	all       bool
}

// statusKind parses [KIND/]NAME; a bare NAME is a Propagation's.
func statusKind(arg string) (objectKind, string, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		kind, name = "propagation", arg
	}
	var k objectKind
	switch strings.ToLower(kind) {
	case "propagation", "propagations", "fprop":
		k = kindPropagation
	case "clusterpropagation", "clusterpropagations", "fcprop":
		k = kindClusterPropagation
	case "placement", "placements", "fpl":
		k = kindPlacement
	default:
		switch {
		case isRGDKind(kind):
			k = kindRGD
		case isAPIPropagationKind(kind):
			k = kindAPIPropagation
		default:
			return "", "", usageError(fmt.Errorf("%q: want propagation/NAME, clusterpropagation/NAME, placement/NAME, rgd/NAME or apipropagation/NAME", arg))
		}
	}
	if name == "" {
		return "", "", usageError(fmt.Errorf("%q names no object: want %s/NAME", arg, k))
	}
	return k, name, nil
}

// statusObjects reads the object of a kind (not rgd) called name; for a namespaced kind, in
// the namespace of where, or with -A in every namespace (at least one).
func statusObjects(ctx context.Context, hub client.Reader, kind objectKind, name string, where scope) ([]client.Object, error) {
	var obj client.Object
	switch kind {
	case kindClusterPropagation:
		obj = &flotillav1.ClusterPropagation{}
	case kindAPIPropagation:
		obj = &flotillav1.APIPropagation{}
	case kindPropagation:
		obj = &flotillav1.Propagation{}
	case kindPlacement:
		obj = &flotillav1.Placement{}
	default:
		return nil, fmt.Errorf("no objects of kind %s to read", kind)
	}
	if !kind.namespaced() {
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		return []client.Object{obj}, nil
	}
	if where.all {
		objs, err := namedEverywhere(ctx, hub, kind, name)
		if err != nil {
			return nil, fmt.Errorf("list %ss: %w", kind, err)
		}
		if len(objs) == 0 {
			return nil, fmt.Errorf("no %s named %s in any namespace (list them with: kubectl get %ss -A)", kind, name, kind)
		}
		return objs, nil
	}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: where.namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFoundIn(ctx, hub, kind, name, where, err)
		}
		return nil, fmt.Errorf("%s %s/%s: %w", kind, where.namespace, name, err)
	}
	return []client.Object{obj}, nil
}

// notFoundIn says that an object of a namespaced kind is not in the namespace looked in, and
// how to find it: the namespaces that have one of that name, when the user may list them.
func notFoundIn(ctx context.Context, hub client.Reader, kind objectKind, name string, where scope, err error) error {
	msg := fmt.Sprintf("%s %s not found in namespace %s", kind, name, where.namespace)
	objs, listErr := namedEverywhere(ctx, hub, kind, name)
	var namespaces []string
	for _, o := range objs {
		namespaces = append(namespaces, o.GetNamespace())
	}
	switch {
	case len(namespaces) == 1:
		msg += fmt.Sprintf("; it is in namespace %s: pass -n %s", namespaces[0], namespaces[0])
	case len(namespaces) > 1:
		msg += fmt.Sprintf("; there is one in namespaces %s: pass -n NAMESPACE, or -A for all", strings.Join(namespaces, ", "))
	case listErr == nil:
		msg += fmt.Sprintf(", nor in any other namespace (list them with: kubectl get %ss -A)", kind)
	case !where.given:
		msg += "; pass -n NAMESPACE"
	}
	return hintedError{msg: msg, err: err}
}

// namedEverywhere lists the objects of a namespaced kind called name, in every namespace.
func namedEverywhere(ctx context.Context, hub client.Reader, kind objectKind, name string) ([]client.Object, error) {
	var list client.ObjectList = &flotillav1.PropagationList{}
	if kind == kindPlacement {
		list = &flotillav1.PlacementList{}
	}
	if err := hub.List(ctx, list); err != nil {
		return nil, err
	}
	var out []client.Object
	err := meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok && obj.GetName() == name {
			out = append(out, obj)
		}
		return nil
	})
	return out, err
}

// getPropagator reads the Propagation ([propagation/]NAME) or ClusterPropagation
// (clusterpropagation/NAME) an argument names.
func getPropagator(ctx context.Context, hub client.Reader, arg string, where scope) (client.Object, error) {
	kind, name, err := statusKind(arg)
	if err != nil {
		return nil, err
	}
	if kind != kindPropagation && kind != kindClusterPropagation {
		return nil, usageError(fmt.Errorf("%q: want propagation/NAME, clusterpropagation/NAME, KIND/NAME of a transparent-mode object (deployment/NAME, ...), rgd/NAME or apipropagation/NAME", arg))
	}
	objs, err := statusObjects(ctx, hub, kind, name, scope{namespace: where.namespace, given: where.given})
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}
