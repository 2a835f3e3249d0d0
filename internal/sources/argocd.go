package sources

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Argo CD's declarative cluster convention: a Secret labelled ArgoCDSecretTypeLabel=cluster in
// Argo CD's namespace, with the keys name, server and config (a JSON document with the
// credentials).
const (
	ArgoCDSecretTypeLabel = "argocd.argoproj.io/secret-type"
	argoCDLabelPrefix     = "argocd.argoproj.io/"
)

// ArgoCDApplicationKind tells that Argo CD is installed on the hub.
var ArgoCDApplicationKind = schema.GroupKind{Group: "argoproj.io", Kind: "Application"}

// argoCD imports Argo CD cluster Secrets. Only bearer-token and TLS client-certificate
// credentials are imported: Argo CD's exec-provider and AWS configurations would run a
// program named by hub content, and basic auth is not a Kubernetes credential Flotilla uses.
// The importer builds a kubeconfig from the Secret, which goes into the imported Cluster's
// credentials Secret like any other.
func argoCD(imp *importer, namespace string) *secretSource {
	return &secretSource{imp: imp, namespace: namespace,
		source: flotillav1.SourceArgoCD, controller: "import-argocd",
		marked: func(labels map[string]string) bool { return labels[ArgoCDSecretTypeLabel] == "cluster" },
		toImport: func(meta *metav1.PartialObjectMetadata, secret *corev1.Secret) (clusterImport, bool) {
			name := string(secret.Data["name"])
			if name == "" {
				name = meta.Name
			}
			kubeconfig, err := argoKubeconfig(name, string(secret.Data["server"]), secret.Data["config"])
			if err != nil {
				imp.events.Eventf(meta, corev1.EventTypeWarning, ReasonUnsupported, "not imported: %s", err)
				return clusterImport{}, false
			}
			return clusterImport{
				name:       clusterName(name),
				labels:     carryLabels(meta.Labels, func(k string) bool { return strings.HasPrefix(k, argoCDLabelPrefix) }),
				kubeconfig: kubeconfig,
			}, true
		},
	}
}

// argoClusterConfig is the part of Argo CD's cluster config that Flotilla reads; what is
// refused is recognised by name only.
type argoClusterConfig struct {
	BearerToken     string `json:"bearerToken"`
	Username        string `json:"username"`
	Password        string `json:"password"`
	TLSClientConfig struct {
		Insecure   bool   `json:"insecure"`
		ServerName string `json:"serverName"`
		CAData     []byte `json:"caData"`
		CertData   []byte `json:"certData"`
		KeyData    []byte `json:"keyData"`
	} `json:"tlsClientConfig"`
	ExecProviderConfig json.RawMessage `json:"execProviderConfig"`
	AWSAuthConfig      json.RawMessage `json:"awsAuthConfig"`
	ProxyURL           string          `json:"proxyUrl"`
}

// argoKubeconfig turns an Argo CD cluster Secret's server and config into a kubeconfig.
// Errors name fields, never their values.
func argoKubeconfig(name, server string, config []byte) ([]byte, error) {
	if u, err := url.Parse(server); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("key server is not an https:// address without credentials")
	}
	var cfg argoClusterConfig
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("key config is not Argo CD's JSON cluster config")
	}
	var refused []string
	if len(cfg.ExecProviderConfig) > 0 && string(cfg.ExecProviderConfig) != "null" {
		refused = append(refused, "execProviderConfig (it would run a program)")
	}
	if len(cfg.AWSAuthConfig) > 0 && string(cfg.AWSAuthConfig) != "null" {
		refused = append(refused, "awsAuthConfig (it would run a program)")
	}
	if cfg.Username != "" || cfg.Password != "" {
		refused = append(refused, "username/password")
	}
	if cfg.ProxyURL != "" {
		refused = append(refused, "proxyUrl")
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, fmt.Errorf("config uses %s; Flotilla imports Argo CD clusters with bearerToken or tlsClientConfig credentials only", strings.Join(refused, ", "))
	}
	tls := cfg.TLSClientConfig
	if cfg.BearerToken == "" && (len(tls.CertData) == 0 || len(tls.KeyData) == 0) {
		return nil, fmt.Errorf("config has neither bearerToken nor tlsClientConfig.certData and keyData")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: tls.CAData,
		InsecureSkipTLSVerify:    tls.Insecure,
		TLSServerName:            tls.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: tls.CertData, ClientKeyData: tls.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.Write(*kc)
}
