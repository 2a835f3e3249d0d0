package propagation

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// selectSecrets is selectResources for v1 Secrets, which never sit whole in the hub
// controller's memory: they are listed as metadata (the cache keeps only that, from the
// metadata watch SetupWithManager starts), and each Secret chosen is read with a GET that
// nothing caches. That costs a GET per selected Secret per pass, and keeps one tenant from
// filling the controller's memory with every Secret on the hub.
//
// Secrets that hold credentials are never selected, whatever the selector says: every Secret of
// membership.Namespace (flotilla-system, where spoke kubeconfigs live), any Secret a Cluster
// names in spec.credentials, and ServiceAccount and bootstrap token Secrets.
func (h hubSelector) selectSecrets(ctx context.Context, sel flotillav1.ResourceSelector, opts []client.ListOption) ([]*unstructured.Unstructured, error) {
	if sel.Namespace == membership.Namespace {
		return nil, invalidSpecError{fmt.Sprintf("Secrets in %s hold spoke credentials and are never delivered", membership.Namespace)}
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := h.hub.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	credentials, err := h.clusterCredentials(ctx)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		m := &list.Items[i]
		key := client.ObjectKeyFromObject(m)
		switch {
		case sel.Name != "" && m.Name != sel.Name,
			!m.DeletionTimestamp.IsZero(),
			render.Managed(m.Labels),
			m.Namespace == membership.Namespace,
			credentials[key]:
			continue
		}
		s := &unstructured.Unstructured{}
		s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := h.secrets.Get(ctx, key, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue // deleted since the cache saw it
			}
			return nil, fmt.Errorf("read Secret %s: %w", key, err)
		}
		if isTokenSecret(s) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// clusterCredentials returns the Secrets Clusters name as their credentials.
func (h hubSelector) clusterCredentials(ctx context.Context) (map[client.ObjectKey]bool, error) {
	var clusters flotillav1.ClusterList
	if err := h.hub.List(ctx, &clusters); err != nil {
		return nil, fmt.Errorf("list Clusters (their credentials are never delivered): %w", err)
	}
	out := make(map[client.ObjectKey]bool, len(clusters.Items))
	for _, c := range clusters.Items {
		ref := c.Spec.Credentials
		out[client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}] = true
	}
	return out, nil
}

// isTokenSecret reports whether a Secret holds a ServiceAccount token or a bootstrap token:
// credentials for the hub itself, never delivered.
func isTokenSecret(s *unstructured.Unstructured) bool {
	t, _, _ := unstructured.NestedString(s.Object, "type")
	return t == string(corev1.SecretTypeServiceAccountToken) || t == string(corev1.SecretTypeBootstrapToken)
}
