package sources

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CAPISecretType is the type Cluster API gives the Secrets it writes for a cluster: its
// kubeconfig, CA, etcd and ServiceAccount keys.
const CAPISecretType corev1.SecretType = "cluster.x-k8s.io/secret"

// CredentialSecret says why a hub Secret holds credentials that are never delivered, or ""
// for one that may be. It knows each such Secret by what makes an importer (or the hub
// itself) read it, whatever namespace it is in, since the importers' namespaces are flags
// and the sources' conventions are not:
//   - every Secret of flotilla-system, where Flotilla keeps the spokes' credentials;
//   - a kubeconfig Secret (sigs.k8s.io/multicluster-runtime-kubeconfig=true);
//   - an Argo CD Secret (argocd.argoproj.io/secret-type: clusters, repositories);
//   - a Cluster API Secret (type cluster.x-k8s.io/secret, the label
//     cluster.x-k8s.io/cluster-name, or the name <cluster>-kubeconfig the importer reads);
//   - a ClusterProfile consumer's credentials (x-k8s.io/cluster-profile);
//   - a ServiceAccount or bootstrap token (type), credentials for the hub itself.
//
// typ may be empty when only the Secret's metadata is known; a Secret is then asked about
// again once it is read whole.
func CredentialSecret(m metav1.Object, typ corev1.SecretType) string {
	labels := m.GetLabels()
	has := func(key string) bool { _, ok := labels[key]; return ok }
	switch {
	case m.GetNamespace() == defaultNamespace:
		return fmt.Sprintf("every Secret of %s holds spoke credentials", defaultNamespace)
	case labels[KubeconfigSecretLabel] == "true":
		return fmt.Sprintf("it is a kubeconfig Secret (label %s=true) that Flotilla imports clusters from", KubeconfigSecretLabel)
	case has(ArgoCDSecretTypeLabel):
		return fmt.Sprintf("it holds Argo CD credentials (label %s)", ArgoCDSecretTypeLabel)
	case typ == CAPISecretType, has(CAPIClusterNameLabel):
		return "it holds a Cluster API cluster's credentials (type " + string(CAPISecretType) + " or label " + CAPIClusterNameLabel + ")"
	case strings.HasSuffix(m.GetName(), "-kubeconfig"):
		return "its name, <cluster>-kubeconfig, is that of a Cluster API cluster's kubeconfig"
	case has(LabelClusterProfile):
		return fmt.Sprintf("it holds a ClusterProfile's credentials (label %s)", LabelClusterProfile)
	case typ == corev1.SecretTypeServiceAccountToken, typ == corev1.SecretTypeBootstrapToken:
		return "it holds a token for the hub (type " + string(typ) + ")"
	}
	return ""
}
