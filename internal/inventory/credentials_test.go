package inventory

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// TestLoadCredentialsRefusesPlugins checks that the inventory reads hub Secrets through the
// hardened loader (package kubeconfig, which tests each refusal): a plugin is recorded on the
// Cluster as KubeconfigInvalid, not run.
func TestLoadCredentialsRefusesPlugins(t *testing.T) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "sh"}}
	kc.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "ctx"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "eu-1-kubeconfig"},
		Data: map[string][]byte{"kubeconfig": data}}
	cluster := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"},
		Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{Namespace: "flotilla-system", Name: "eu-1-kubeconfig"}}}
	reader := fake.NewClientBuilder().WithObjects(secret).Build()

	creds, obs, err := loadCredentials(context.Background(), reader, cluster)
	if err != nil || creds != nil || obs == nil {
		t.Fatalf("loadCredentials = %v, %v, %v; want an observation", creds, obs, err)
	}
	if obs.reason != flotillav1.ReasonKubeconfigInvalid || !strings.Contains(obs.message, `user "u": exec plugin`) {
		t.Fatalf("observation = %+v", *obs)
	}
}
