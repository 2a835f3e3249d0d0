package sources

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Cluster API's conventions: a Cluster of cluster.x-k8s.io (v1beta1 or v1beta2) and, once its
// control plane is up, the Secret <cluster>-kubeconfig in its namespace, labelled with
// CAPIClusterNameLabel, holding an admin kubeconfig under the key CAPIKubeconfigKey.
const (
	CAPIClusterNameLabel = "cluster.x-k8s.io/cluster-name"
	CAPIKubeconfigKey    = "value"
	capiPhaseProvisioned = "Provisioned"
)

// CAPIClusterKind is the kind the Cluster API importer reads.
var CAPIClusterKind = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"}

// clusterAPI imports provisioned Cluster API Clusters. It reads them as unstructured objects
// in whichever version the hub prefers, so Flotilla does not depend on Cluster API's Go module
// (which would pull newer versions of shared modules), and reads only what v1beta1 and
// v1beta2 share.
//
// Only the Clusters of the namespaces it is given are read (the admin namespace unless told
// otherwise): whoever creates a Cluster API Cluster chooses its labels, which Placements
// select on, administrators' included, so a Cluster API Cluster a tenant creates in its own
// namespace never joins the fleet.
type clusterAPI struct {
	imp        *importer
	version    string
	namespaces []string
}

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

func (s *clusterAPI) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CAPIClusterKind.WithVersion(s.version))
	return u
}

func (s *clusterAPI) setup(mgr manager.Manager) error {
	allowed := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return s.allowed(o.GetNamespace()) }))
	return ctrl.NewControllerManagedBy(mgr).
		Named("import-cluster-api").
		For(s.object(), allowed).
		Watches(SecretMetadata(), handler.EnqueueRequestsFromMapFunc(capiClusterOfSecret), builder.OnlyMetadata, allowed).
		Watches(&flotillav1.Cluster{}, s.imp.clusterEvents(flotillav1.SourceClusterAPI), builder.WithPredicates(clusterChanged)).
		Complete(s)
}

// capiClusterOfSecret maps a Cluster API kubeconfig Secret to its Cluster.
func capiClusterOfSecret(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := strings.CutSuffix(o.GetName(), "-kubeconfig")
	if !ok || o.GetLabels()[CAPIClusterNameLabel] != name {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// allowed tells whether Cluster API Clusters of a namespace are imported.
func (s *clusterAPI) allowed(namespace string) bool {
	return slices.Contains(s.namespaces, namespace)
}

func (s *clusterAPI) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ref := req.Namespace + "/" + req.Name
	if !s.allowed(req.Namespace) {
		// A Cluster imported before its namespace left the list: disconnect it.
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceClusterAPI, ref)
	}
	capi := s.object()
	err := s.imp.hub.Get(ctx, req.NamespacedName, capi)
	if apierrors.IsNotFound(err) || (err == nil && (!capi.GetDeletionTimestamp().IsZero() || !provisioned(capi))) {
		// Deleted, being deleted, or not (or no longer) provisioned: disconnect.
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceClusterAPI, ref)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	secretName := req.Name + "-kubeconfig"
	secret := &corev1.Secret{}
	err = s.imp.reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: secretName}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("read secret %s/%s: %w", req.Namespace, secretName, err)
	}
	data := secret.Data[CAPIKubeconfigKey]
	if len(data) == 0 {
		s.imp.events.Eventf(capi, corev1.EventTypeWarning, ReasonNoCredentials,
			"not imported: the cluster is provisioned but Secret %s has no %q key holding its kubeconfig", secretName, CAPIKubeconfigKey)
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceClusterAPI, ref)
	}
	return s.imp.apply(ctx, clusterImport{
		source:     flotillav1.SourceClusterAPI,
		ref:        ref,
		object:     capi,
		name:       clusterName(req.Name),
		labels:     carryLabels(capi.GetLabels(), isCAPILabel),
		kubeconfig: data,
	})
}

// provisioned tells whether a Cluster API Cluster's control plane is up: status.phase is
// Provisioned (both versions). A status without a phase falls back to the control plane's
// readiness: status.initialization.controlPlaneInitialized (v1beta2) or
// status.controlPlaneReady (v1beta1).
func provisioned(u *unstructured.Unstructured) bool {
	if phase, found, _ := unstructured.NestedString(u.Object, "status", "phase"); found && phase != "" {
		return phase == capiPhaseProvisioned
	}
	if ok, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "controlPlaneInitialized"); ok {
		return true
	}
	ok, _, _ := unstructured.NestedBool(u.Object, "status", "controlPlaneReady")
	return ok
}

// isCAPILabel tells the labels Cluster API sets for itself, which are not carried over.
func isCAPILabel(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	return ok && (prefix == "cluster.x-k8s.io" || strings.HasSuffix(prefix, ".cluster.x-k8s.io"))
}
