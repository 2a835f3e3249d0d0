package sources

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
func kubeconfigSecrets(imp *importer, namespace string) *secretSource {
	return &secretSource{imp: imp, namespace: namespace,
		source: flotillav1.SourceKubeconfigSecret, controller: "import-kubeconfig-secrets",
		marked: func(labels map[string]string) bool { return labels[KubeconfigSecretLabel] == "true" },
		toImport: func(meta *metav1.PartialObjectMetadata, secret *corev1.Secret) (clusterImport, bool) {
			data := secret.Data[KubeconfigSecretKey]
			if len(data) == 0 {
				imp.events.Eventf(meta, corev1.EventTypeWarning, ReasonNoCredentials,
					"not imported: the Secret has no %q key holding a kubeconfig", KubeconfigSecretKey)
				return clusterImport{}, false
			}
			return clusterImport{
				name:       clusterName(meta.Name),
				labels:     carryLabels(meta.Labels, func(k string) bool { return k == KubeconfigSecretLabel }),
				kubeconfig: data,
			}, true
		},
	}
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
