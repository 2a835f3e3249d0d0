package deliver

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// Deleting a CustomResourceDefinition deletes every object of its kind, and deleting a
// Namespace everything in it: one prune can take data Flotilla never delivered. Before such a
// prune, the deliverer counts what it would take along that Flotilla does not manage; when that
// is not zero the prune waits for confirmation of the revision, like a prune over budget.

// cascadeSample bounds the objects a cascade report names.
const cascadeSample = 3

// cascade is what deleting one object would take along that Flotilla does not manage.
type cascade struct {
	count  int
	sample []string
}

// cascadeOf counts the unmanaged objects that deleting o would delete with it: the custom
// resources of a CRD, the objects in a Namespace. Other kinds take nothing along.
func cascadeOf(ctx context.Context, cl cluster.Cluster, o *unstructured.Unstructured) (cascade, error) {
	switch o.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}:
		return crdCascade(ctx, cl.GetAPIReader(), o)
	case schema.GroupKind{Kind: "Namespace"}:
		dc, err := discovery.NewDiscoveryClientForConfig(cl.GetConfig())
		if err != nil {
			return cascade{}, err
		}
		return namespaceCascade(ctx, cl.GetAPIReader(), dc, o.GetName())
	}
	return cascade{}, nil
}

func crdCascade(ctx context.Context, reader client.Reader, o *unstructured.Unstructured) (cascade, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
		return cascade{}, err
	}
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		return countUnmanaged(ctx, reader, gvk, "")
	}
	return cascade{}, nil
}

// namespaceCascade counts the unmanaged objects in a namespace, over every kind the spoke
// serves there that can be listed. What the cluster itself puts in every namespace (the default
// ServiceAccount, the kube-root-ca.crt ConfigMap, Events) is not the user's data and does not
// count.
func namespaceCascade(ctx context.Context, reader client.Reader, dc discovery.DiscoveryInterface, ns string) (cascade, error) {
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return cascade{}, fmt.Errorf("discover the kinds in namespace %s: %w", ns, err)
	}
	var total cascade
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !canList(r) || r.Kind == "Event" {
				continue
			}
			c, err := countUnmanaged(ctx, reader, gv.WithKind(r.Kind), ns)
			if err != nil {
				return cascade{}, err
			}
			total.count += c.count
			total.sample = append(total.sample, c.sample...)
		}
	}
	if len(total.sample) > cascadeSample {
		total.sample = total.sample[:cascadeSample]
	}
	return total, nil
}

func canList(r metav1.APIResource) bool {
	for _, v := range r.Verbs {
		if v == "list" {
			return true
		}
	}
	return false
}

// builtIn reports whether the cluster itself creates this object in every namespace.
func builtIn(gvk schema.GroupVersionKind, name string) bool {
	return (gvk.Group == "" && gvk.Kind == "ServiceAccount" && name == "default") ||
		(gvk.Group == "" && gvk.Kind == "ConfigMap" && name == "kube-root-ca.crt")
}

func countUnmanaged(ctx context.Context, reader client.Reader, gvk schema.GroupVersionKind, ns string) (cascade, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	err := reader.List(ctx, list, opts...)
	if meta.IsNoMatchError(err) {
		return cascade{}, nil
	}
	if err != nil {
		return cascade{}, fmt.Errorf("list %s to see what the prune would delete with it: %w", gvk.Kind, err)
	}
	var c cascade
	for _, item := range list.Items {
		if render.Managed(item.GetLabels()) || builtIn(gvk, item.GetName()) {
			continue
		}
		c.count++
		if len(c.sample) < cascadeSample {
			c.sample = append(c.sample, strings.ToLower(gvk.Kind)+" "+qualified(item.GetNamespace(), item.GetName()))
		}
	}
	return c, nil
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// cascadeBlockedError is a prune of a CRD or Namespace held because it would delete objects
// Flotilla does not manage.
type cascadeBlockedError struct {
	object  string
	cascade cascade
	confirm string // the command that confirms (decide.ConfirmCommand)
}

func (e cascadeBlockedError) Error() string {
	return fmt.Sprintf("pruning %s would also delete %d objects Flotilla does not manage (%s); nothing was deleted. "+
		"Move or delete them first, or confirm with: %s",
		e.object, e.cascade.count, strings.Join(e.cascade.sample, ", "), e.confirm)
}
