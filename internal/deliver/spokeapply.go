package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/membership"
)

// spokeApplier sends server-side applies to one engaged cluster and does not decode the
// answers: Flotilla learns the result from its spoke watch, so decoding every returned object
// (a thousand per bulk delivery, per cluster) would only cost CPU and garbage. Of an apply's
// answer it reads the resourceVersion alone (resourceVersionOf: the first fields of the JSON);
// the one answer it reads whole is that of a dry run asking what the cluster would store
// (serverform.go), made only when an object looks drifted. It shares the cluster's HTTP
// transport.
type spokeApplier struct {
	cl     cluster.Cluster
	rest   rest.Interface
	mapper meta.RESTMapper
	// mappings caches the mapper's answers by kind: asking the mapper on every apply cost
	// about 7 % of the controller's CPU in a bulk delivery. An apply that finds no such
	// resource drops the kind's entry (a CRD replaced by one with another plural or scope).
	// The appliers of an instance's namespace identities share it.
	mappings *sync.Map // schema.GroupVersionKind -> *meta.RESTMapping
	// boundAt is when the RoleBinding of the namespace identity this applier acts as was
	// written, zero when it was there already (nsidentity.go).
	boundAt time.Time
}

func newSpokeApplier(cl cluster.Cluster) (*spokeApplier, error) {
	return newSpokeApplierWith(cl, cl.GetHTTPClient(), &sync.Map{})
}

// newSpokeApplierWith returns an applier to cl sending through httpClient.
func newSpokeApplierWith(cl cluster.Cluster, httpClient *http.Client, mappings *sync.Map) (*spokeApplier, error) {
	cfg := rest.CopyConfig(cl.GetConfig())
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion() // only for error Status bodies
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &spokeApplier{cl: cl, rest: rc, mapper: cl.GetRESTMapper(), mappings: mappings}, nil
}

// apply server-side applies obj as Flotilla's field manager, taking ownership of conflicting
// fields, and returns the resourceVersion the cluster stored it at ("" when the answer does not
// say). With dryRun the cluster validates and admits the object but stores nothing.
func (a *spokeApplier) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (string, error) {
	req, err := a.request(obj, dryRun)
	if err != nil {
		return "", err
	}
	res := req.Do(ctx)
	if err := a.forgetIfMissing(obj, res.Error()); err != nil || dryRun {
		return "", err
	}
	raw, _ := res.Raw()
	return resourceVersionOf(raw), nil
}

// resourceVersionOf reads metadata.resourceVersion of an object's JSON as an API server writes
// it (metadata near the start, resourceVersion among its first fields), reading no further
// than that; "" when it is not there.
func resourceVersionOf(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	inMetadata := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := t.(string)
		switch {
		case !inMetadata && key == "metadata":
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				return ""
			}
			inMetadata = true
			continue
		case inMetadata && key == "resourceVersion":
			var rv string
			if dec.Decode(&rv) != nil {
				return ""
			}
			return rv
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// applyStatus server-side applies obj's status to its status subresource as Flotilla's field
// manager. The subresource never creates: a missing object is NotFound.
func (a *spokeApplier) applyStatus(ctx context.Context, obj *unstructured.Unstructured) error {
	req, err := a.request(obj, false)
	if err != nil {
		return err
	}
	return req.SubResource("status").Do(ctx).Error()
}

// forgetIfMissing drops the cached mapping of obj's kind when the cluster says the resource
// does not exist, and returns err.
func (a *spokeApplier) forgetIfMissing(obj *unstructured.Unstructured, err error) error {
	if apierrors.IsNotFound(err) {
		a.mappings.Delete(obj.GroupVersionKind())
	}
	return err
}

// wouldStore dry-runs the apply of obj and returns the object the cluster would store, as
// JSON: the one answer Flotilla reads (see serverform.go).
func (a *spokeApplier) wouldStore(ctx context.Context, obj *unstructured.Unstructured) ([]byte, error) {
	req, err := a.request(obj, true)
	if err != nil {
		return nil, err
	}
	res := req.Do(ctx)
	if err := a.forgetIfMissing(obj, res.Error()); err != nil {
		return nil, err
	}
	return res.Raw()
}

func (a *spokeApplier) request(obj *unstructured.Unstructured, dryRun bool) (*rest.Request, error) {
	// Every path built here is checked, status writes included; applyOne checks earlier, before
	// anything is read.
	if err := checkName(obj); err != nil {
		return nil, err
	}
	mapping, err := a.mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	req := a.rest.Patch(types.ApplyPatchType).AbsPath(resourcePath(mapping, obj)).Body(body).
		Param("fieldManager", FieldManager).Param("force", "true")
	if dryRun {
		req = req.Param("dryRun", metav1.DryRunAll)
	}
	return req, nil
}

// mapping returns the REST mapping of a kind, from the cache or the cluster's mapper.
func (a *spokeApplier) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m, ok := a.mappings.Load(gvk); ok {
		return m.(*meta.RESTMapping), nil
	}
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	a.mappings.Store(gvk, m)
	return m, nil
}

// resourcePath is the API path of obj: /api/v1/namespaces/ns/configmaps/name and the like.
func resourcePath(m *meta.RESTMapping, obj *unstructured.Unstructured) string {
	gv := m.Resource.GroupVersion()
	p := "/api/" + gv.Version
	if gv.Group != "" {
		p = path.Join("/apis", gv.Group, gv.Version)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		p = path.Join(p, "namespaces", obj.GetNamespace())
	}
	return path.Join(p, m.Resource.Resource, obj.GetName())
}

// applierCache holds the appliers of a worker's current cluster instance: Flotilla's own, and
// one per namespace identity (nsidentity.go); a cluster engaged again (new credentials, back
// from an outage) gets new ones.
type applierCache struct {
	mu         sync.Mutex
	applier    *spokeApplier
	namespaces map[string]*namespaceEntry
}

// namespaceEntry is the applier of one namespace identity, once its RoleBinding is in place.
type namespaceEntry struct {
	mu      sync.Mutex
	applier *spokeApplier
}

func (c *applierCache) get(cl cluster.Cluster) (*spokeApplier, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.applier != nil && c.applier.cl == cl {
		return c.applier, nil
	}
	a, err := newSpokeApplier(cl)
	if err != nil {
		return nil, err
	}
	c.applier, c.namespaces = a, map[string]*namespaceEntry{}
	return a, nil
}

// namespace returns the applier of namespace ns's identity on base's instance, calling bind
// with it (once, until bind succeeds) before it is first used; base itself when bind says the
// identity cannot be used there.
func (c *applierCache) namespace(base *spokeApplier, ns string, bind func(*spokeApplier) (bool, error)) (*spokeApplier, error) {
	c.mu.Lock()
	e := c.namespaces[ns]
	if c.applier != base {
		e = &namespaceEntry{} // an instance replaced meanwhile: serve this delivery, keep nothing
	} else if e == nil {
		e = &namespaceEntry{}
		c.namespaces[ns] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.applier != nil {
		return e.applier, nil
	}
	a, err := impersonating(base, membership.NamespaceUser(ns))
	if err != nil {
		return nil, err
	}
	usable, err := bind(a)
	if err != nil {
		return nil, err
	}
	if !usable {
		a = base
	}
	e.applier = a
	return a, nil
}
