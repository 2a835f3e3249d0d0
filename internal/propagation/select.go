package propagation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// invalidSpecError is a selector or manifest the user must fix.
type invalidSpecError struct{ msg string }

func (e invalidSpecError) Error() string { return e.msg }

// hubSelector reads what propagators select on the hub.
type hubSelector struct {
	hub client.Client
	// secrets reads Secrets carrying manifests (uncached in the controller).
	secrets client.Reader
	// watch, when set, is called for every kind read, so its later changes reconcile.
	watch func(context.Context, schema.GroupVersionKind) error
	// readTimeout, when set, bounds each read of hub (a cache: see readCache).
	readTimeout time.Duration
}

func (s hubSelector) watchKind(ctx context.Context, gvk schema.GroupVersionKind) error {
	if s.watch == nil {
		return nil
	}
	return s.watch(ctx, gvk)
}

// selector is the controller's hubSelector: through the cache, watching what it reads.
func (r *Reconciler) selector() hubSelector {
	return hubSelector{hub: r.Hub, secrets: r.HubReader, watch: r.watchHubKind, readTimeout: hubCacheReadTimeout}
}

// selectObjects returns the hub objects and manifest documents a propagator delivers, and
// where each Secret among them comes from (by render.Key: what a revision keeps instead of
// its values).
func (h hubSelector) selectObjects(ctx context.Context, p propagator) ([]*unstructured.Unstructured, map[string]revisions.Source, error) {
	var out []*unstructured.Unstructured
	sources := map[string]revisions.Source{}
	// secretDocs says every document of the source is secret (a manifest Secret's); only
	// Secrets and such documents are looked up (a key per object costs a reconcile of a
	// thousand objects a few milliseconds).
	from := func(objs []*unstructured.Unstructured, secretDocs bool, src func(o *unstructured.Unstructured) revisions.Source) {
		for _, o := range objs {
			// Secrets get their values back from their source; any document of a manifest
			// Secret is secret as a whole, and its source keeps the revision from being stored.
			if secretDocs || revisions.IsSecret(o) {
				if k := render.Key(o); sources[k] == (revisions.Source{}) {
					sources[k] = src(o) // the first, as dedupe keeps the first
				}
			}
		}
		out = append(out, objs...)
	}
	for i, sel := range p.spec.ResourceSelectors {
		objs, err := h.selectResources(ctx, p, sel)
		if err != nil {
			return nil, nil, fmt.Errorf("resourceSelectors[%d] (%s %s): %w", i, sel.APIVersion, sel.Kind, err)
		}
		from(objs, false, func(o *unstructured.Unstructured) revisions.Source {
			return revisions.Source{Kind: "Secret", Namespace: o.GetNamespace(), Name: o.GetName()}
		})
	}
	for i, src := range p.spec.Manifests {
		objs, err := h.readManifests(ctx, p, src)
		if err != nil {
			return nil, nil, fmt.Errorf("manifests[%d] (%s %s): %w", i, src.Kind, src.Name, err)
		}
		from(objs, src.Kind == "Secret", func(*unstructured.Unstructured) revisions.Source {
			return revisions.Source{Kind: string(src.Kind), Namespace: p.obj.GetNamespace(), Name: src.Name, Manifest: true}
		})
	}
	if len(p.spec.ResourceSelectors) == 1 && len(p.spec.Manifests) == 0 {
		return out, sources, nil // one list of the hub cache names each object once
	}
	return dedupe(out), sources, nil
}

func (h hubSelector) selectResources(ctx context.Context, p propagator, sel flotillav1.ResourceSelector) ([]*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(sel.APIVersion)
	if err != nil {
		return nil, invalidSpecError{fmt.Sprintf("apiVersion %q: %v", sel.APIVersion, err)}
	}
	gvk := gv.WithKind(sel.Kind)
	mapping, err := h.hub.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, invalidSpecError{fmt.Sprintf("the hub does not serve %s %s", sel.APIVersion, sel.Kind)}
	}
	if err != nil {
		return nil, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	var opts []client.ListOption
	switch p.kind {
	case kindPropagation:
		if !namespaced {
			return nil, invalidSpecError{fmt.Sprintf("%s is cluster-scoped; deliver it with a ClusterPropagation", sel.Kind)}
		}
		if sel.Namespace != "" && sel.Namespace != p.obj.GetNamespace() {
			return nil, invalidSpecError{"a Propagation selects only in its own namespace; leave namespace empty or use a ClusterPropagation"}
		}
		opts = append(opts, client.InNamespace(p.obj.GetNamespace()))
	case kindClusterPropagation:
		if namespaced && sel.Namespace != "" {
			opts = append(opts, client.InNamespace(sel.Namespace))
		}
	}
	if sel.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil {
			return nil, invalidSpecError{fmt.Sprintf("labelSelector: %v", err)}
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: s})
	} else {
		opts = append(opts, client.MatchingLabelsSelector{Selector: labels.Everything()})
	}
	if mapping.Resource.GroupResource() == corev1.Resource("secrets") {
		return h.selectSecrets(ctx, p, sel, opts)
	}
	if err := h.watchKind(ctx, gvk); err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	// The objects are only read (rendering copies them), so the cache's copies are used as they are.
	opts = append(opts, client.UnsafeDisableDeepCopy)
	if err := readCache(ctx, h.readTimeout, gvk, func(ctx context.Context) error { return h.hub.List(ctx, list, opts...) }); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		o := &list.Items[i]
		if sel.Name != "" && o.GetName() != sel.Name {
			continue
		}
		if !o.GetDeletionTimestamp().IsZero() {
			continue
		}
		// Flotilla's own objects are never delivered, nor are hub-local objects it created.
		if render.Managed(o.GetLabels()) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

func (h hubSelector) readManifests(ctx context.Context, p propagator, src flotillav1.ManifestSource) ([]*unstructured.Unstructured, error) {
	key := client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: src.Name}
	data := map[string]string{}
	switch src.Kind {
	case "ConfigMap":
		gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
		if err := h.watchKind(ctx, gvk); err != nil {
			return nil, err
		}
		// Read as unstructured: the same informer the watch above feeds from. A typed read would
		// start a second informer, which can lag the watched one, so the reconcile an update
		// triggers could read the ConfigMap as it was before it, and nothing would come again.
		cm := &unstructured.Unstructured{}
		cm.SetGroupVersionKind(gvk)
		if err := readCache(ctx, h.readTimeout, gvk, func(ctx context.Context) error { return h.hub.Get(ctx, key, cm) }); err != nil {
			return nil, err
		}
		cmData, _, err := unstructured.NestedStringMap(cm.Object, "data")
		if err != nil {
			return nil, invalidSpecError{fmt.Sprintf("ConfigMap %s: data: %v", src.Name, err)}
		}
		data = cmData
	case "Secret":
		// Secrets are read without caching them on the hub.
		s := &corev1.Secret{}
		if err := h.secrets.Get(ctx, key, s); err != nil {
			return nil, err
		}
		if why := sources.CredentialSecret(s, s.Type); why != "" {
			return nil, invalidSpecError{fmt.Sprintf("Secret %s holds credentials, which are never delivered: %s", src.Name, why)}
		}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	default:
		return nil, invalidSpecError{fmt.Sprintf("unknown manifest kind %q", src.Kind)}
	}
	objs, err := render.ParseManifests(string(src.Kind)+" "+src.Name, data)
	var malformed *render.ManifestError
	if src.Kind == "Secret" && errors.As(err, &malformed) {
		// The parser may quote the document, and status and Events are not for Secret data.
		return nil, invalidSpecError{malformed.Redacted()}
	}
	if err != nil {
		return nil, invalidSpecError{err.Error()}
	}
	if p.kind != kindPropagation {
		return objs, nil
	}
	// A Propagation's manifests stay in its namespace: the tenancy rule, checked here so that
	// the whole manifest is refused before anything of it is delivered (each spoke checks
	// again with its own REST mapping).
	ns := p.obj.GetNamespace()
	var refused []string
	for _, o := range objs {
		doc := fmt.Sprintf("%s %q", o.GetKind(), o.GetName())
		switch {
		case !h.namespaced(o):
			refused = append(refused, doc+" is cluster-scoped")
		case o.GetNamespace() == "":
			o.SetNamespace(ns)
		case o.GetNamespace() != ns:
			refused = append(refused, fmt.Sprintf("%s names namespace %q", doc, o.GetNamespace()))
		}
	}
	if len(refused) > 0 {
		return nil, invalidSpecError{fmt.Sprintf("%s; a Propagation delivers only namespaced objects into its own namespace %s (cluster-scoped objects and other namespaces need a ClusterPropagation, which cluster administrators create); nothing of this manifest is delivered",
			strings.Join(refused, ", "), ns)}
	}
	return objs, nil
}

// namespaced reports whether an object's kind is namespaced on the hub; kinds the hub does not
// know (their CRD may be on the spokes only) are taken as namespaced here, and every spoke
// checks them against its own REST mapping before delivering them.
func (h hubSelector) namespaced(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	m, err := h.hub.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return true
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace
}

func dedupe(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := map[string]bool{}
	out := objs[:0]
	for _, o := range objs {
		k := render.Key(o)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, o)
	}
	return out
}
