package sources

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Options says which importers run. The zero value runs none; `flotilla hub` turns each on by
// default, and an importer whose source kind the hub does not serve stays off.
type Options struct {
	// KubeconfigSecrets imports Secrets labelled sigs.k8s.io/multicluster-runtime-kubeconfig=true
	// in KubeconfigSecretNamespace (default flotilla-system).
	KubeconfigSecrets         bool
	KubeconfigSecretNamespace string

	// ClusterAPI imports provisioned Cluster API Clusters (cluster.x-k8s.io v1beta2 or v1beta1,
	// whichever the hub prefers) in ClusterAPINamespaces (default flotilla-system), when the
	// hub serves them. Whoever may create a Cluster API Cluster in one of those namespaces adds
	// a cluster to the fleet and chooses its labels, so they must be namespaces only cluster
	// administrators write to.
	ClusterAPI           bool
	ClusterAPINamespaces []string

	// ArgoCD imports Argo CD cluster Secrets (argocd.argoproj.io/secret-type=cluster) in
	// ArgoCDNamespace (default argocd), when the hub serves Argo CD's Applications.
	ArgoCD          bool
	ArgoCDNamespace string

	// ClusterProfiles imports ClusterProfiles (multicluster.x-k8s.io/v1alpha1) of other cluster
	// managers, with the credentials their managers give the consumer ClusterProfileConsumer
	// (default flotilla), when the hub serves ClusterProfiles.
	ClusterProfiles        bool
	ClusterProfileConsumer string
	// PublishClusterProfiles keeps a ClusterProfile for every Cluster in
	// ClusterProfileNamespace (default flotilla-system), when the hub serves ClusterProfiles.
	PublishClusterProfiles  bool
	ClusterProfileNamespace string

	// CredentialsNamespace is where imported Clusters' credentials Secrets are written
	// (default flotilla-system, where `flotilla join` keeps them too).
	CredentialsNamespace string

	// UserAgent identifies the importers' one request to each spoke (default flotilla-import).
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.KubeconfigSecretNamespace == "" {
		o.KubeconfigSecretNamespace = defaultNamespace
	}
	if len(o.ClusterAPINamespaces) == 0 {
		o.ClusterAPINamespaces = []string{defaultNamespace}
	}
	if o.ArgoCDNamespace == "" {
		o.ArgoCDNamespace = "argocd"
	}
	if o.ClusterProfileConsumer == "" {
		o.ClusterProfileConsumer = "flotilla"
	}
	if o.ClusterProfileNamespace == "" {
		o.ClusterProfileNamespace = defaultNamespace
	}
	if o.CredentialsNamespace == "" {
		o.CredentialsNamespace = defaultNamespace
	}
	if o.UserAgent == "" {
		o.UserAgent = fieldManager
	}
	return o
}

// defaultNamespace is Flotilla's namespace on the hub.
const defaultNamespace = "flotilla-system"

// +kubebuilder:rbac:groups=flotilla.dev,resources=clusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=flotilla-system,resources=secrets,verbs=create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Setup registers the enabled importers with the hub manager and logs which run, and why the
// others do not.
func Setup(ctx context.Context, mgr manager.Manager, opts Options) error {
	opts = opts.withDefaults()
	log := ctrl.LoggerFrom(ctx).WithName("sources")
	if !opts.KubeconfigSecrets && !opts.ClusterAPI && !opts.ArgoCD && !opts.ClusterProfiles && !opts.PublishClusterProfiles {
		log.Info("Cluster importers are all off")
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &flotillav1.Cluster{}, sourceRefIndex, func(o client.Object) []string {
		if s := o.GetLabels()[flotillav1.LabelSource]; s != "" {
			return []string{sourceKey(s, o.GetAnnotations()[flotillav1.AnnotationSourceRef])}
		}
		return nil
	}); err != nil {
		return err
	}
	// core/v1 Events, as every Flotilla controller records them (see internal/propagation).
	//lint:ignore SA1019 events.k8s.io folds Events that differ only in their message.
	events := mgr.GetEventRecorderFor("flotilla-import")
	imp := &importer{
		hub:       mgr.GetClient(),
		reader:    mgr.GetAPIReader(),
		events:    events,
		ids:       newIdentifier(opts.UserAgent),
		namespace: opts.CredentialsNamespace,
	}
	if opts.KubeconfigSecrets {
		if err := kubeconfigSecrets(imp, opts.KubeconfigSecretNamespace).setup(mgr); err != nil {
			return fmt.Errorf("set up the kubeconfig Secret importer: %w", err)
		}
		log.Info("Importing clusters from kubeconfig Secrets", "namespace", opts.KubeconfigSecretNamespace,
			"label", KubeconfigSecretLabel+"=true", "key", KubeconfigSecretKey)
	} else {
		log.Info("Not importing clusters from kubeconfig Secrets: turned off")
	}
	switch version, err := served(mgr.GetRESTMapper(), CAPIClusterKind, "v1beta2", "v1beta1"); {
	case !opts.ClusterAPI:
		log.Info("Not importing clusters from Cluster API: turned off")
	case err != nil:
		log.Info("Not importing clusters from Cluster API", "reason", err.Error())
	default:
		if err := (&clusterAPI{imp: imp, version: version, namespaces: opts.ClusterAPINamespaces}).setup(mgr); err != nil {
			return fmt.Errorf("set up the Cluster API importer: %w", err)
		}
		log.Info("Importing provisioned Cluster API clusters", "version", CAPIClusterKind.WithVersion(version).GroupVersion().String(),
			"namespaces", opts.ClusterAPINamespaces, "credentials", "<cluster>-kubeconfig, key "+CAPIKubeconfigKey)
	}
	switch _, err := served(mgr.GetRESTMapper(), ArgoCDApplicationKind); {
	case !opts.ArgoCD:
		log.Info("Not importing clusters from Argo CD: turned off")
	case err != nil:
		log.Info("Not importing clusters from Argo CD", "reason", err.Error())
	default:
		if err := argoCD(imp, opts.ArgoCDNamespace).setup(mgr); err != nil {
			return fmt.Errorf("set up the Argo CD importer: %w", err)
		}
		log.Info("Importing clusters from Argo CD cluster Secrets", "namespace", opts.ArgoCDNamespace,
			"label", ArgoCDSecretTypeLabel+"=cluster")
	}
	_, profilesErr := served(mgr.GetRESTMapper(), ClusterProfileKind.GroupKind(), ClusterProfileKind.Version)
	switch {
	case !opts.ClusterProfiles:
		log.Info("Not importing clusters from ClusterProfiles: turned off")
	case profilesErr != nil:
		log.Info("Not importing clusters from ClusterProfiles", "reason", profilesErr.Error())
	default:
		if err := (&clusterProfiles{imp: imp, consumer: opts.ClusterProfileConsumer, manager: ClusterManagerName}).setup(mgr); err != nil {
			return fmt.Errorf("set up the ClusterProfile importer: %w", err)
		}
		log.Info("Importing clusters from ClusterProfiles of other cluster managers", "consumer", opts.ClusterProfileConsumer)
	}
	switch {
	case !opts.PublishClusterProfiles:
		log.Info("Not publishing ClusterProfiles: turned off")
	case profilesErr != nil:
		log.Info("Not publishing ClusterProfiles", "reason", profilesErr.Error())
	default:
		if err := (&publisher{hub: mgr.GetClient(), namespace: opts.ClusterProfileNamespace, manager: ClusterManagerName}).setup(mgr); err != nil {
			return fmt.Errorf("set up ClusterProfile publishing: %w", err)
		}
		log.Info("Publishing a ClusterProfile for every Cluster", "namespace", opts.ClusterProfileNamespace,
			"label", LabelClusterManager+"="+ClusterManagerName)
	}
	return nil
}

// ClusterManagerName is Flotilla's name as a cluster manager in the ClusterProfiles it publishes.
const ClusterManagerName = "flotilla"

// served returns the version of a kind the hub serves (its preferred one), or why none.
func served(mapper meta.RESTMapper, gk schema.GroupKind, versions ...string) (string, error) {
	m, err := mapper.RESTMapping(gk, versions...)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return "", fmt.Errorf("the hub does not serve %s", gk)
		}
		return "", fmt.Errorf("discover %s on the hub: %w", gk, err)
	}
	return m.GroupVersionKind.Version, nil
}
