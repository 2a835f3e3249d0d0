package decide

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ErrOutOfScope marks an object its owner may not deliver. It is permanent: the same object
// is refused again until the owner's content changes.
var ErrOutOfScope = errors.New("outside the owner's namespace")

// CheckScope is the tenancy rule, applied on every cluster with that cluster's own REST
// scope of the object's kind: an owner that lives in a namespace (a Propagation, a
// transparent-mode object) delivers only namespaced objects, and only into its own namespace.
// Cluster-scoped kinds and other namespaces are for ClusterPropagations, which only cluster
// administrators create. The hub checks manifests too, but a kind can be namespaced on the hub
// and cluster-scoped on a spoke, or known only to the spoke, and overrides run after the hub's
// check: the deliverer, the only writer to spokes, is where the rule cannot be bypassed.
//
// An owner on a spoke whose strategy is ClusterWide (an instance of a fleet API served with
// tenancy Cluster, which only an administrator sets) delivers anywhere on its own cluster. An
// owner on a spoke that is not cluster-wide delivers nothing if it has no namespace (a
// cluster-scoped instance: whoever may create it is not known to be an administrator).
//
// scope is not read for a cluster-scoped or cluster-wide owner; for a namespaced one, an empty
// scope (not looked up) is refused like a cluster-scoped kind, so a caller that forgets it
// fails closed.
func CheckScope(owner render.Owner, s Strategy, obj *unstructured.Unstructured, scope meta.RESTScopeName) error {
	if obj.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}) &&
		obj.GetName() == membership.NamespaceRoleBinding {
		// Flotilla's own: it grants a namespace's identity the right to deliver there. An owner
		// that took it over (conflict: Adopt) could bind that identity to nothing and lock every
		// owner of the namespace out, or bind others to the grant.
		return fmt.Errorf("%w: RoleBinding %q is Flotilla's own, which grants the identity it delivers into this namespace as; choose another name",
			ErrOutOfScope, membership.NamespaceRoleBinding)
	}
	switch {
	case owner.OnSpoke() && s.ClusterWide:
		return nil // an instance an administrator let reach its whole cluster
	case owner.OnSpoke() && owner.Namespace == "":
		return fmt.Errorf("%w: %s is cluster-scoped, and its children could go anywhere on the cluster "+
			"(the APIPropagation serving this API may set tenancy: Cluster)", ErrOutOfScope, owner)
	case owner.Namespace == "":
		return nil // a cluster-scoped owner on the hub: an administrator's delivery
	}
	// An owner on a spoke (an instance of a fleet API) has no cluster-wide counterpart to
	// point to: its children stay in its namespace.
	hint := "; deliver it with a ClusterPropagation"
	if owner.OnSpoke() {
		hint = " (the APIPropagation serving this API may set tenancy: Cluster)"
	}
	if scope != meta.RESTScopeNameNamespace {
		return fmt.Errorf("%w: %s is cluster-scoped on this cluster, and %s may deliver only namespaced objects into namespace %s%s",
			ErrOutOfScope, obj.GetKind(), owner, owner.Namespace, hint)
	}
	if ns := obj.GetNamespace(); ns != owner.Namespace {
		return fmt.Errorf("%w: %s may deliver only into its own namespace %s, not %q%s",
			ErrOutOfScope, owner, owner.Namespace, ns, hint)
	}
	return nil
}

// ScopeOf is the scope of an object's kind on a cluster, from that cluster's REST mapping: the
// input CheckScope needs, which a kind's scope on the hub cannot answer. It is the one rule
// input looked up rather than given; the mapper may ask the cluster's discovery.
func ScopeOf(mapper meta.RESTMapper, obj *unstructured.Unstructured) (meta.RESTScopeName, error) {
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", err
	}
	return m.Scope.Name(), nil
}
