package sources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCredentialSecret(t *testing.T) {
	for _, tc := range []struct {
		what      string
		namespace string
		name      string
		labels    map[string]string
		typ       corev1.SecretType
		want      bool
	}{
		{"an ordinary Secret", "team", "app", map[string]string{"app": "web"}, corev1.SecretTypeOpaque, false},
		{"an image pull Secret", "team", "registry", nil, corev1.SecretTypeDockerConfigJson, false},
		{"any Secret of flotilla-system", "flotilla-system", "anything", nil, "", true},
		{"a kubeconfig Secret in another namespace", "clusters", "prod", map[string]string{KubeconfigSecretLabel: "true"}, "", true},
		{"an Argo CD cluster Secret", "argocd", "prod", map[string]string{ArgoCDSecretTypeLabel: "cluster"}, "", true},
		{"an Argo CD repository Secret", "team", "repo", map[string]string{ArgoCDSecretTypeLabel: "repository"}, "", true},
		{"a Cluster API Secret by type", "capi", "prod-ca", nil, CAPISecretType, true},
		{"a Cluster API Secret by label", "capi", "prod-etcd", map[string]string{CAPIClusterNameLabel: "prod"}, "", true},
		{"a Cluster API kubeconfig by name", "capi", "prod-kubeconfig", nil, corev1.SecretTypeOpaque, true},
		{"ClusterProfile credentials", "consumer", "prod", map[string]string{LabelClusterProfile: "prod"}, "", true},
		{"a ServiceAccount token", "team", "builder-token", nil, corev1.SecretTypeServiceAccountToken, true},
		{"a bootstrap token", "kube-system", "bootstrap-token-abc", nil, corev1.SecretTypeBootstrapToken, true},
	} {
		m := &metav1.ObjectMeta{Namespace: tc.namespace, Name: tc.name, Labels: tc.labels}
		if why := CredentialSecret(m, tc.typ); (why != "") != tc.want {
			t.Errorf("%s: %q", tc.what, why)
		}
	}
}
