package sources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The kubeconfig Secret convention of sigs.k8s.io/multicluster-runtime's kubeconfig provider
// (and kro's KREP-013): a Secret labelled KubeconfigSecretLabel=true holds a kubeconfig under
// KubeconfigSecretKey, and the cluster is named after the Secret.
const (
	KubeconfigSecretLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig"
	KubeconfigSecretKey   = "kubeconfig"
)

// kubeconfigSecrets imports the labelled kubeconfig Secrets of one namespace.
type kubeconfigSecrets struct {
	imp       *importer
	namespace string
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

func (s *kubeconfigSecrets) setup(mgr manager.Manager) error {
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == s.namespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named("import-kubeconfig-secrets").
		For(secretMetadata(), builder.OnlyMetadata, builder.WithPredicates(inNamespace)).
		Watches(&flotillav1.Cluster{}, s.imp.clusterEvents(flotillav1.SourceKubeconfigSecret), builder.WithPredicates(clusterChanged)).
		Complete(s)
}

func (s *kubeconfigSecrets) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ref := req.Namespace + "/" + req.Name
	meta := secretMetadata()
	err := s.imp.hub.Get(ctx, req.NamespacedName, meta)
	if apierrors.IsNotFound(err) || (err == nil && (meta.Labels[KubeconfigSecretLabel] != "true" || !meta.DeletionTimestamp.IsZero())) {
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceKubeconfigSecret, ref)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	secret := &corev1.Secret{}
	if err := s.imp.reader.Get(ctx, req.NamespacedName, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceKubeconfigSecret, ref)
		}
		return reconcile.Result{}, fmt.Errorf("read secret %s: %w", ref, err)
	}
	data := secret.Data[KubeconfigSecretKey]
	if len(data) == 0 {
		s.imp.events.Eventf(meta, corev1.EventTypeWarning, ReasonNoCredentials,
			"not imported: the Secret has no %q key holding a kubeconfig", KubeconfigSecretKey)
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceKubeconfigSecret, ref)
	}
	return s.imp.apply(ctx, clusterImport{
		source:     flotillav1.SourceKubeconfigSecret,
		ref:        ref,
		object:     meta,
		name:       clusterName(req.Name),
		labels:     carryLabels(meta.Labels, func(k string) bool { return k == KubeconfigSecretLabel }),
		kubeconfig: data,
	})
}

// secretMetadata is a Secret as the hub cache holds it: metadata only.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}
