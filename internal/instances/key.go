package instances

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Instance names an instance of a fleet API on its cluster.
type Instance struct {
	Kind      schema.GroupVersionKind
	Namespace string // empty for a cluster-scoped kind
	Name      string
}

// request is one instance on one cluster: the typed cluster name travels in the request.
type request = mcreconcile.WithCluster[Instance]

func newRequest(cluster string, kind schema.GroupVersionKind, namespace, name string) request {
	return request{Request: Instance{Kind: kind, Namespace: namespace, Name: name}, ClusterName: multicluster.ClusterName(cluster)}
}

// ownerOf is the deliverer's owner of an instance's children: the instance on its cluster.
func ownerOf(req request) render.Owner {
	kind := req.Request.Kind.Kind
	if g := req.Request.Kind.Group; g != "" {
		kind += "." + g
	}
	return render.Owner{Kind: kind, Namespace: req.Request.Namespace, Name: req.Request.Name, Cluster: string(req.ClusterName)}
}

// storeKey is the key of an instance in its kind's informer.
func storeKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// instanceOf returns the instance a child on a cluster belongs to, from the labels kro puts on
// children, if the child is one Flotilla delivered there for an instance.
func instanceOf(cluster string, child *unstructured.Unstructured) (request, bool) {
	owner, ok := render.ParseOwner(child.GetAnnotations()[flotillav1.AnnotationOwner])
	if !ok || owner.Cluster != cluster {
		return request{}, false
	}
	l := child.GetLabels()
	kind := schema.GroupVersionKind{Group: l[kro.InstanceGroupLabel], Version: l[kro.InstanceVersionLabel], Kind: l[kro.InstanceKindLabel]}
	name := l[kro.InstanceNameLabel]
	if kind.Kind == "" || kind.Version == "" || name == "" {
		return request{}, false
	}
	return newRequest(cluster, kind, l[kro.InstanceNamespaceLabel], name), true
}
