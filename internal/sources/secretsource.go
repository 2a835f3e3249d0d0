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

// secretSource is what the importers whose sources are marked Secrets of one namespace share
// (kubeconfig Secrets, Argo CD cluster Secrets): the Secrets are watched as metadata only, a
// marked one is read with an uncached GET, and one that is gone, no longer marked or being
// deleted gives up its Cluster.
type secretSource struct {
	imp       *importer
	namespace string
	// source is the flotilla.dev/source value; controller names the controller.
	source, controller string
	// marked tells a source Secret by its labels.
	marked func(labels map[string]string) bool
	// toImport reads the Secret; false means it cannot be imported (it has said why with an
	// Event on meta).
	toImport func(meta *metav1.PartialObjectMetadata, secret *corev1.Secret) (clusterImport, bool)
}

func (s *secretSource) setup(mgr manager.Manager) error {
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == s.namespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named(s.controller).
		For(SecretMetadata(), builder.OnlyMetadata, builder.WithPredicates(inNamespace)).
		Watches(&flotillav1.Cluster{}, s.imp.clusterEvents(s.source), builder.WithPredicates(clusterChanged)).
		Complete(s)
}

func (s *secretSource) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ref := req.Namespace + "/" + req.Name
	meta := SecretMetadata()
	err := s.imp.hub.Get(ctx, req.NamespacedName, meta)
	if apierrors.IsNotFound(err) || (err == nil && (!s.marked(meta.Labels) || !meta.DeletionTimestamp.IsZero())) {
		return reconcile.Result{}, s.imp.remove(ctx, s.source, ref)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	secret := &corev1.Secret{}
	if err := s.imp.reader.Get(ctx, req.NamespacedName, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, s.imp.remove(ctx, s.source, ref)
		}
		return reconcile.Result{}, fmt.Errorf("read secret %s: %w", ref, err)
	}
	imp, ok := s.toImport(meta, secret)
	if !ok {
		return reconcile.Result{}, s.imp.remove(ctx, s.source, ref)
	}
	imp.source, imp.ref, imp.object = s.source, ref, meta
	return s.imp.apply(ctx, imp)
}

// SecretMetadata is a Secret as the hub cache holds it: metadata only.
func SecretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}
