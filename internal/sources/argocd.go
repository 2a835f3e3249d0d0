package sources

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
type argoCD struct {
	imp       *importer
	namespace string
}

func (s *argoCD) setup(mgr manager.Manager) error {
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == s.namespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named("import-argocd").
		For(secretMetadata(), builder.OnlyMetadata, builder.WithPredicates(inNamespace)).
		Watches(&flotillav1.Cluster{}, s.imp.clusterEvents(flotillav1.SourceArgoCD), builder.WithPredicates(clusterChanged)).
		Complete(s)
}

func (s *argoCD) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ref := req.Namespace + "/" + req.Name
	meta := secretMetadata()
	err := s.imp.hub.Get(ctx, req.NamespacedName, meta)
	if apierrors.IsNotFound(err) || (err == nil && (meta.Labels[ArgoCDSecretTypeLabel] != "cluster" || !meta.DeletionTimestamp.IsZero())) {
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceArgoCD, ref)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	secret := &corev1.Secret{}
	if err := s.imp.reader.Get(ctx, req.NamespacedName, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceArgoCD, ref)
		}
		return reconcile.Result{}, fmt.Errorf("read secret %s: %w", ref, err)
	}
	name := string(secret.Data["name"])
	if name == "" {
		name = req.Name
	}
	kubeconfig, err := argoKubeconfig(name, string(secret.Data["server"]), secret.Data["config"])
	if err != nil {
		s.imp.events.Eventf(meta, corev1.EventTypeWarning, ReasonUnsupported, "not imported: %s", err)
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceArgoCD, ref)
	}
	return s.imp.apply(ctx, clusterImport{
		source:     flotillav1.SourceArgoCD,
		ref:        ref,
		object:     meta,
		name:       clusterName(name),
		labels:     carryLabels(meta.Labels, func(k string) bool { return strings.HasPrefix(k, argoCDLabelPrefix) }),
		kubeconfig: kubeconfig,
	})
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
