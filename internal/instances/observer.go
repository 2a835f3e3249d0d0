package instances

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// cacheObserver answers kro's queries from the spoke cache, which holds every child Flotilla
// delivered (by name for a resource; by kro's instance and node labels for a forEach): a
// steady-state reconcile sends no request to the spoke. The cache holds nothing else, so an
// object Flotilla did not deliver is absent here, and the deliverer refuses to take it over.
//
// The kinds of the graph's external references are read from shared watches instead
// (externals.go). Unless the API is served cluster-wide, nothing is read outside the instance's
// own namespace (confine): not a child, not an external reference.
//
// Before Flotilla first delivers an instance a kro on the cluster managed, the children that kro
// applied are on the spoke but not in the cache (they carry the instance's ApplySet mark, not
// Flotilla's label); right after a delivery, Flotilla's own may not be in it yet. What the cache misses is
// then read from the spoke itself, and those carrying the mark (takeover) are answered: kro's
// pass judges them as they are, so an instance kro left ACTIVE stays ACTIVE while Flotilla
// takes its children over.
type cacheObserver struct {
	ctx context.Context
	cl  cluster.Cluster
	// takeover is the ApplySet mark of the instance's children while a kro's may be on the
	// spoke and not in the cache (see takeoverMark); empty otherwise: no read to the spoke.
	takeover decide.Mark
	// namespace is the instance's: the only one anything may be read in, unless clusterWide.
	namespace   string
	clusterWide bool
	// namespaced are the graph's kinds that are namespaced on the spoke: a list of a child
	// kind across all namespaces is read in namespace only.
	namespaced map[schema.GroupVersionKind]bool
	// externals are the graph's external reference kinds; external reads them, and used
	// records the watches read.
	externals map[schema.GroupVersionKind]bool
	external  func(context.Context, externalKey, schema.GroupVersionResource) (*externalWatch, error)
	used      map[externalKey]bool
}

var _ kro.Observer = (*cacheObserver)(nil)

// Observe implements kro.Observer. A kind the spoke does not serve has no objects; any other
// failure to read is an error, which stops kro's walk: the state of the cluster is unknown.
func (o *cacheObserver) Observe(q kro.Query) ([]*unstructured.Unstructured, error) {
	q, err := o.confine(q)
	if err != nil {
		return nil, err
	}
	if o.externals[q.Kind] {
		return o.observeExternal(q)
	}
	found, err := read(o.ctx, o.cl.GetCache(), q, "the spoke cache")
	if err != nil || len(found) > 0 || o.takeover.Key == "" {
		return found, err
	}
	return o.observeTakeover(q)
}

// observeTakeover answers a query the cache has nothing for from the spoke itself, with the
// objects carrying the instance's ApplySet mark: those a kro on the cluster applied for it.
// Anything else of the same name stays unseen, as in the cache, and the deliverer refuses it.
func (o *cacheObserver) observeTakeover(q kro.Query) ([]*unstructured.Unstructured, error) {
	found, err := read(o.ctx, o.cl.GetAPIReader(), q, "the spoke")
	return slices.DeleteFunc(found, func(u *unstructured.Unstructured) bool { return !o.takeover.On(u.GetLabels()) }), err
}

// read answers a query from reader (from is what it reads, for errors): the object named, or
// those the selector matches. A kind the spoke does not serve has none.
func read(ctx context.Context, reader client.Reader, q kro.Query, from string) ([]*unstructured.Unstructured, error) {
	if q.Name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(q.Kind)
		err := reader.Get(ctx, client.ObjectKey{Namespace: q.Namespace, Name: q.Name}, u)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read %s %s from %s: %w", q.Kind.Kind, q.Name, from, err)
		}
		return []*unstructured.Unstructured{u}, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(q.Kind.GroupVersion().WithKind(q.Kind.Kind + "List"))
	var opts []client.ListOption
	if q.Namespace != "" {
		opts = append(opts, client.InNamespace(q.Namespace))
	}
	if q.Selector != nil {
		opts = append(opts, client.MatchingLabelsSelector{Selector: q.Selector})
	}
	err := reader.List(ctx, list, opts...)
	switch {
	case meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list %s from %s: %w", q.Kind.Kind, from, err)
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// takeoverMark is the ApplySet mark of an instance's children when some may be on the spoke
// and not in the cache: the instance carries an ApplySet inventory (kro, or Flotilla, has
// managed it) and it is not settled: Flotilla has not delivered it since it started (a kro's
// children are not in the cache), or delivered it moments ago (its own may not be in the cache
// yet; on a busy machine the next pass can begin first). Once settled, every child Flotilla
// delivered is in the cache, and one missing there (deleted, or left out by includeWhen) is
// not read from the spoke at every pass. A new instance has no inventory, and no children.
func takeoverMark(instance *unstructured.Unstructured, settled bool) decide.Mark {
	if _, managed := instance.GetAnnotations()[kro.ApplySetGroupKindsAnnotation]; settled || !managed {
		return decide.Mark{}
	}
	return decide.Mark{Key: kro.ApplySetPartOfLabel, Value: kro.ApplySetID(instance)}
}

// confine keeps a query inside the instance's namespace unless the API is served cluster-wide:
// Flotilla reads with its own identity, which may read anything, and what kro reads reaches the
// instance's status. A list of a namespaced child kind (a forEach's items, found by the
// instance's labels) is read in the instance's namespace only, where its items can be; any other
// query elsewhere, or of a cluster-scoped kind, is refused before anything is read, which stops
// kro's pass: the instance shows ERROR, saying why.
func (o *cacheObserver) confine(q kro.Query) (kro.Query, error) {
	if o.clusterWide || (q.Namespace == o.namespace && o.namespace != "") {
		return q, nil
	}
	if q.Namespace == "" && q.Name == "" && o.namespaced[q.Kind] && !o.externals[q.Kind] && o.namespace != "" {
		q.Namespace = o.namespace
		return q, nil
	}
	what := q.Kind.Kind
	switch {
	case !o.namespaced[q.Kind]:
		what += " (cluster-scoped on this cluster)"
	case q.Namespace == "":
		what += " in all namespaces"
	default:
		what += fmt.Sprintf(" in namespace %q", q.Namespace)
	}
	if o.externals[q.Kind] {
		what = "external reference to " + what
	}
	return q, fmt.Errorf("%s not allowed: an instance may read and write only its own namespace %q (the APIPropagation serving this API may set tenancy: Cluster)", what, o.namespace)
}

// namespacedKinds are the kinds of a graph's resources that are namespaced on its cluster.
func namespacedKinds(c *kro.Compiled) map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for _, n := range c.Nodes() {
		if n.Namespaced {
			out[n.Kind] = true
		}
	}
	return out
}

// observeExternal reads an external reference from its shared watch.
func (o *cacheObserver) observeExternal(q kro.Query) ([]*unstructured.Unstructured, error) {
	key := externalKey{kind: q.Kind, namespace: q.Namespace}
	w, err := o.external(o.ctx, key, q.Resource)
	if err != nil {
		return nil, err
	}
	o.used[key] = true
	return readExternal(w, q), nil
}
