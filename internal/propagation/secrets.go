package propagation

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// selectSecrets is selectResources for v1 Secrets, which never sit whole in the hub
// controller's memory: they are listed as metadata (the cache keeps only that, from the
// metadata watch SetupWithManager starts), and each Secret chosen is read with a GET that
// nothing caches. That costs a GET per selected Secret per pass, and keeps one tenant from
// filling the controller's memory with every Secret on the hub.
//
// Secrets that hold credentials are never delivered, whatever the selector says: those
// sources.CredentialSecret knows (flotilla-system's, the importers' sources in any namespace,
// tokens) and any Secret a Cluster names in spec.credentials. A Propagation whose selector
// matches one, and any selector naming one, is refused whole with the reason, so that nothing
// of it is delivered; a ClusterPropagation's broader selection (an administrator's) leaves
// them out.
func (h hubSelector) selectSecrets(ctx context.Context, p propagator, sel flotillav1.ResourceSelector, opts []client.ListOption) ([]*unstructured.Unstructured, error) {
	if sel.Namespace == membership.Namespace {
		return nil, invalidSpecError{fmt.Sprintf("Secrets in %s hold spoke credentials and are never delivered", membership.Namespace)}
	}
	refuse := p.kind == kindPropagation || sel.Name != ""
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
	var refused []string
	credential := func(o metav1.Object, typ corev1.SecretType) bool {
		why := sources.CredentialSecret(o, typ)
		if why == "" && credentials[client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}] {
			why = "a Cluster names it as its credentials"
		}
		if why != "" && refuse {
			refused = append(refused, fmt.Sprintf("Secret %s/%s (%s)", o.GetNamespace(), o.GetName(), why))
		}
		return why != ""
	}
	for i := range list.Items {
		m := &list.Items[i]
		if (sel.Name != "" && m.Name != sel.Name) || !m.DeletionTimestamp.IsZero() || render.Managed(m.Labels) || credential(m, "") {
			continue
		}
		key := client.ObjectKeyFromObject(m)
		s := &unstructured.Unstructured{}
		s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := h.secrets.Get(ctx, key, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue // deleted since the cache saw it
			}
			return nil, fmt.Errorf("read Secret %s: %w", key, err)
		}
		typ, _, _ := unstructured.NestedString(s.Object, "type")
		if credential(s, corev1.SecretType(typ)) {
			continue
		}
		out = append(out, s)
	}
	if len(refused) > 0 {
		return nil, invalidSpecError{credentialsRefused(refused)}
	}
	return out, nil
}

// credentialsRefused says which credential Secrets a selection matched, a few by name.
func credentialsRefused(refused []string) string {
	const named = 3
	what := strings.Join(refused[:min(len(refused), named)], ", ")
	if len(refused) > named {
		what += fmt.Sprintf(" and %d more", len(refused)-named)
	}
	return fmt.Sprintf("the selection matches credential Secrets, which are never delivered: %s; narrow it (a name or a label selector) to leave them out; nothing of it is delivered", what)
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
