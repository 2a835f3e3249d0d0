package membership

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
)

// TestUnjoinRefusesStoredKubeconfigThatRunsOrReads stores, in the hub Secret, kubeconfigs that
// would run a program or read a file on the operator's workstation. Unjoin must refuse them
// before changing anything: the program never runs, the file's content never reaches the
// spoke, the spoke gets no request, and the Cluster and its Secret stay on the hub.
func TestUnjoinRefusesStoredKubeconfigThatRunsOrReads(t *testing.T) {
	tests := []struct {
		name    string
		user    func(dir string) *clientcmdapi.AuthInfo
		refused string
	}{{
		name: "exec plugin",
		user: func(dir string) *clientcmdapi.AuthInfo {
			script := filepath.Join(dir, "plugin.sh")
			body := "#!/bin/sh\ntouch " + filepath.Join(dir, "plugin-ran") + "\n" +
				`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'` + "\n"
			if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
				t.Fatal(err)
			}
			return &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: script, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
		},
		refused: `user "flotilla": exec plugin`,
	}, {
		name: "token file",
		user: func(dir string) *clientcmdapi.AuthInfo {
			path := filepath.Join(dir, "workstation-secret")
			if err := os.WriteFile(path, []byte("workstation-secret-token"), 0o600); err != nil {
				t.Fatal(err)
			}
			return &clientcmdapi.AuthInfo{TokenFile: path}
		},
		refused: `user "flotilla": tokenFile`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var requests atomic.Int32
			var leaked atomic.Bool
			spoke := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if a := r.Header.Get("Authorization"); strings.Contains(a, "from-plugin") || strings.Contains(a, "workstation-secret-token") {
					leaked.Store(true)
				}
				http.NotFound(w, r)
			}))
			defer spoke.Close()

			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: spoke.Certificate().Raw})
			hub := hubWithCluster(t, "eu-1", storedKubeconfig(t, spoke.URL, ca, tt.user(dir)))
			err := Unjoin(context.Background(), hub, UnjoinOptions{Name: "eu-1"})

			var refused *kubeconfig.RefusedError
			if !errors.As(err, &refused) || !strings.Contains(err.Error(), tt.refused) || !strings.Contains(err.Error(), "--kubeconfig") {
				t.Fatalf("Unjoin error = %v; want a refusal naming %q and --kubeconfig", err, tt.refused)
			}
			if _, err := os.Stat(filepath.Join(dir, "plugin-ran")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the exec plugin ran on the workstation (marker: %v)", err)
			}
			if leaked.Load() {
				t.Fatal("credentials from the workstation reached the spoke")
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("the spoke got %d requests; want 0", n)
			}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: "eu-1"}, &flotillav1.Cluster{}); err != nil {
				t.Fatalf("the Cluster was removed from the hub: %v", err)
			}
			err = hub.Get(context.Background(), client.ObjectKey{Namespace: Namespace, Name: SecretName("eu-1")}, &corev1.Secret{})
			if err != nil {
				t.Fatalf("the credentials Secret was removed from the hub: %v", err)
			}
		})
	}
}

// TestUnjoinWithUnusableStoredKubeconfig keeps the behaviour for a Secret that is simply
// broken: the hub side is removed and the error says what to delete on the spoke.
func TestUnjoinWithUnusableStoredKubeconfig(t *testing.T) {
	hub := hubWithCluster(t, "eu-1", []byte("{{{ not yaml"))
	err := Unjoin(context.Background(), hub, UnjoinOptions{Name: "eu-1"})
	if err == nil || !strings.Contains(err.Error(), "does not parse") || !strings.Contains(err.Error(), "kubectl delete clusterrolebinding") {
		t.Fatalf("Unjoin error = %v", err)
	}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: "eu-1"}, &flotillav1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Cluster still on the hub: %v", err)
	}
}

func storedKubeconfig(t *testing.T, server string, ca []byte, user *clientcmdapi.AuthInfo) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["eu-1"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["flotilla"] = user
	cfg.Contexts["eu-1"] = &clientcmdapi.Context{Cluster: "eu-1", AuthInfo: "flotilla"}
	cfg.CurrentContext = "eu-1"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// hubWithCluster is a fake hub holding a joined Cluster and its credentials Secret.
func hubWithCluster(t *testing.T, name string, kubeconfig []byte) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := flotillav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{Namespace: Namespace, Name: SecretName(name), Key: kubeconfigKey}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: SecretName(name), Labels: map[string]string{flotillav1.LabelCluster: name}},
			Data: map[string][]byte{kubeconfigKey: kubeconfig}},
	).Build()
}

// TestUnjoinRefusesImportedClusters: a Cluster an importer maintains is refused before anything
// changes (the importer would create it again at once, and join created nothing on its spoke),
// and the refusal names the source and how to remove the cluster there.
func TestUnjoinRefusesImportedClusters(t *testing.T) {
	for _, tt := range []struct {
		source, ref string
		want        []string
	}{
		{flotillav1.SourceKubeconfigSecret, "flotilla-system/spoke-3", []string{
			"kubeconfig Secret flotilla-system/spoke-3", "kubectl -n flotilla-system delete secret spoke-3",
			"kubectl -n flotilla-system label secret spoke-3 sigs.k8s.io/multicluster-runtime-kubeconfig-"}},
		{flotillav1.SourceClusterAPI, "flotilla-system/eu-1", []string{"Cluster API cluster flotilla-system/eu-1", "deletes the cluster itself", "--cluster-api-namespace"}},
		{flotillav1.SourceClusterProfile, "fleet/eu-1", []string{"ClusterProfile fleet/eu-1", "x-k8s.io/cluster-profile=eu-1"}},
		{flotillav1.SourceArgoCD, "argocd/cluster-eu-1", []string{"Argo CD cluster Secret argocd/cluster-eu-1", "argocd cluster rm"}},
	} {
		t.Run(tt.source, func(t *testing.T) {
			var requests atomic.Int32
			spoke := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				http.NotFound(w, r)
			}))
			defer spoke.Close()
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: spoke.Certificate().Raw})
			hub := hubWithCluster(t, "eu-1", storedKubeconfig(t, spoke.URL, ca, &clientcmdapi.AuthInfo{Token: "source-token"}))
			ctx := context.Background()
			c := &flotillav1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "eu-1"}, c); err != nil {
				t.Fatal(err)
			}
			c.Labels = map[string]string{flotillav1.LabelSource: tt.source}
			c.Annotations = map[string]string{flotillav1.AnnotationSourceRef: tt.ref}
			if err := hub.Update(ctx, c); err != nil {
				t.Fatal(err)
			}
			var lines []string
			err := Unjoin(ctx, hub, UnjoinOptions{Name: "eu-1", Progress: func(l string) { lines = append(lines, l) }})
			var refused *ImportedError
			if !errors.As(err, &refused) {
				t.Fatalf("Unjoin error = %v; want an *ImportedError", err)
			}
			for _, want := range append(tt.want, "not joined", "flotilla cluster drain eu-1") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal does not say %q:\n%s", want, err)
				}
			}
			if len(lines) != 0 {
				t.Errorf("a refused unjoin reported steps: %q", lines)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("the spoke got %d requests; want 0", n)
			}
			if err := hub.Get(ctx, client.ObjectKey{Name: "eu-1"}, &flotillav1.Cluster{}); err != nil {
				t.Errorf("the Cluster was removed from the hub: %v", err)
			}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: SecretName("eu-1")}, &corev1.Secret{}); err != nil {
				t.Errorf("the credentials Secret was removed from the hub: %v", err)
			}
		})
	}
}

// TestUnjoinReportsOnlyWhatJoinCreated: on a spoke where join from this hub created nothing,
// nothing is deleted and nothing is reported removed (no ServiceAccount, no revoked token); an
// object of join's names that another made stays and is reported as left in place.
func TestUnjoinReportsOnlyWhatJoinCreated(t *testing.T) {
	otherHub := map[string]string{LabelHub: "another-hub"}
	for _, tt := range []struct {
		name    string
		objects []runtime.Object
		want    []string
	}{
		{"nothing there", nil, []string{"nothing of `flotilla join` from this hub was there to remove"}},
		{"someone else's", []runtime.Object{
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccount, Namespace: Namespace, Labels: otherHub}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleBinding}},
		}, []string{
			"serviceaccount flotilla-system/flotilla left in place",
			"clusterrolebinding flotilla left in place",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := kubefake.NewClientset(tt.objects...)
			var lines []string
			if err := removeFromSpoke(context.Background(), cs, "this-hub", false, func(l string) { lines = append(lines, l) }); err != nil {
				t.Fatal(err)
			}
			out := strings.Join(lines, "\n")
			if strings.Contains(out, "removed") || strings.Contains(out, "revoked") {
				t.Errorf("unjoin reported removing what join did not create:\n%s", out)
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("progress does not say %q:\n%s", want, out)
				}
			}
			for _, a := range cs.Actions() {
				if a.GetVerb() == "delete" {
					t.Errorf("unjoin deleted %s on the spoke", a.GetResource().Resource)
				}
			}
		})
	}
}
