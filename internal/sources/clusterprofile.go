package sources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The conventions of SIG-Multicluster's cluster inventory API (KEP-4322) that Flotilla uses.
// ClusterProfiles are read and written as unstructured objects: the Go module
// sigs.k8s.io/cluster-inventory-api is not a dependency.
const (
	// LabelClusterManager on a ClusterProfile names the cluster manager that maintains it.
	LabelClusterManager = "x-k8s.io/cluster-manager"
	// ConditionControlPlaneHealthy is a ClusterProfile's health condition.
	ConditionControlPlaneHealthy = "ControlPlaneHealthy"
	// The consumer-side credentials Secret (KEP-4322 "Secret format"): in a namespace labelled
	// LabelInventoryConsumer=<consumer>, a Secret labelled LabelClusterProfile=<profile> (and
	// LabelClusterProfileNamespace=<its namespace>, "default" when absent) holding a
	// kubeconfig under ProfileKubeconfigKey.
	LabelInventoryConsumer       = "x-k8s.io/cluster-inventory-consumer"
	LabelClusterProfile          = "x-k8s.io/cluster-profile"
	LabelClusterProfileNamespace = "x-k8s.io/cluster-profile-namespace"
	ProfileKubeconfigKey         = "config"
	// TaintSourceUnhealthy is put (NoSchedule) on a Cluster whose ClusterProfile reports its
	// control plane unhealthy: no new placements go there; what runs there stays.
	TaintSourceUnhealthy = "flotilla.dev/source-unhealthy"
)

// ClusterProfileKind is the kind of SIG-Multicluster's ClusterProfile.
var ClusterProfileKind = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ClusterProfile"}

func clusterProfile() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ClusterProfileKind)
	return u
}

// clusterProfiles imports ClusterProfiles of other cluster managers (Open Cluster Management,
// GKE Fleet, ...). Credentials come only from the consumer-side Secret convention, with
// Flotilla as the consumer: the access providers' exec plugins named in a ClusterProfile are
// hub content and are never run.
type clusterProfiles struct {
	imp      *importer
	consumer string
	manager  string // Flotilla's own cluster-manager name: its published profiles are not imported
}

// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

func (s *clusterProfiles) setup(mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("import-cluster-profiles").
		For(clusterProfile()).
		Watches(SecretMetadata(), handler.EnqueueRequestsFromMapFunc(profileOfSecret), builder.OnlyMetadata).
		Watches(namespaceMetadata(), handler.EnqueueRequestsFromMapFunc(s.profilesInNamespace), builder.OnlyMetadata).
		Watches(&flotillav1.Cluster{}, s.imp.clusterEvents(flotillav1.SourceClusterProfile), builder.WithPredicates(clusterChanged)).
		Complete(s)
}

// profilesInNamespace maps a namespace (that may have become, or stopped being, one of the
// consumer's) to the ClusterProfiles its credentials Secrets are for.
func (s *clusterProfiles) profilesInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var secrets metav1.PartialObjectMetadataList
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := s.imp.hub.List(ctx, &secrets, client.InNamespace(o.GetName()), client.HasLabels{LabelClusterProfile}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for k := range secrets.Items {
		reqs = append(reqs, profileOfSecret(ctx, &secrets.Items[k])...)
	}
	return reqs
}

func namespaceMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return m
}

// profileOfSecret maps a consumer credentials Secret to its ClusterProfile.
func profileOfSecret(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[LabelClusterProfile]
	if name == "" {
		return nil
	}
	ns := o.GetLabels()[LabelClusterProfileNamespace]
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

func (s *clusterProfiles) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ref := req.Namespace + "/" + req.Name
	cp := clusterProfile()
	err := s.imp.hub.Get(ctx, req.NamespacedName, cp)
	if apierrors.IsNotFound(err) || (err == nil && (!cp.GetDeletionTimestamp().IsZero() || cp.GetLabels()[LabelClusterManager] == s.manager)) {
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceClusterProfile, ref)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	data, missing, err := s.credentials(ctx, req.Namespace, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	if missing != "" {
		s.imp.events.Event(cp, corev1.EventTypeWarning, ReasonNoCredentials, "not imported: "+missing)
		return reconcile.Result{}, s.imp.remove(ctx, flotillav1.SourceClusterProfile, ref)
	}
	imp := clusterImport{
		source:     flotillav1.SourceClusterProfile,
		ref:        ref,
		object:     cp,
		name:       clusterName(req.Name),
		labels:     profileLabels(cp),
		kubeconfig: data,
	}
	if unhealthy(cp) {
		imp.taints = []flotillav1.ClusterTaint{{Key: TaintSourceUnhealthy, Effect: flotillav1.TaintEffectNoSchedule}}
	}
	return s.imp.apply(ctx, imp)
}

// credentials finds the kubeconfig the cluster manager gave Flotilla for a ClusterProfile, or
// says what is missing.
func (s *clusterProfiles) credentials(ctx context.Context, namespace, name string) ([]byte, string, error) {
	var namespaces metav1.PartialObjectMetadataList
	namespaces.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := s.imp.hub.List(ctx, &namespaces, client.MatchingLabels{LabelInventoryConsumer: s.consumer}); err != nil {
		return nil, "", fmt.Errorf("list namespaces of consumer %s: %w", s.consumer, err)
	}
	var found []*metav1.PartialObjectMetadata
	for _, ns := range namespaces.Items {
		var secrets metav1.PartialObjectMetadataList
		secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := s.imp.hub.List(ctx, &secrets, client.InNamespace(ns.Name), client.MatchingLabels{LabelClusterProfile: name}); err != nil {
			return nil, "", fmt.Errorf("list secrets in %s: %w", ns.Name, err)
		}
		for k := range secrets.Items {
			sec := &secrets.Items[k]
			profileNS := sec.Labels[LabelClusterProfileNamespace]
			if profileNS == "" {
				profileNS = metav1.NamespaceDefault
			}
			if profileNS == namespace {
				found = append(found, sec)
			}
		}
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Sprintf("no credentials for consumer %q: a Secret labelled %s=%s, %s=%s with a kubeconfig under %q, in a namespace labelled %s=%s",
			s.consumer, LabelClusterProfile, name, LabelClusterProfileNamespace, namespace, ProfileKubeconfigKey, LabelInventoryConsumer, s.consumer), nil
	case len(found) > 1:
		return nil, fmt.Sprintf("%d credentials Secrets for consumer %q (%s/%s and %s/%s); there must be one", len(found), s.consumer,
			found[0].Namespace, found[0].Name, found[1].Namespace, found[1].Name), nil
	}
	secret := &corev1.Secret{}
	if err := s.imp.reader.Get(ctx, client.ObjectKeyFromObject(found[0]), secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "the credentials Secret is gone", nil
		}
		return nil, "", fmt.Errorf("read secret %s/%s: %w", found[0].Namespace, found[0].Name, err)
	}
	data := secret.Data[ProfileKubeconfigKey]
	if len(data) == 0 {
		return nil, fmt.Sprintf("Secret %s/%s has no %q key holding a kubeconfig", secret.Namespace, secret.Name, ProfileKubeconfigKey), nil
	}
	return data, "", nil
}

// profileLabels are the Cluster labels of a ClusterProfile: its properties whose name and
// value make a valid label, then its own labels (which win).
func profileLabels(cp *unstructured.Unstructured) map[string]string {
	all := map[string]string{}
	props, _, _ := unstructured.NestedSlice(cp.Object, "status", "properties")
	for _, p := range props {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		value, _ := m["value"].(string)
		all[name] = value
	}
	for k, v := range cp.GetLabels() {
		all[k] = v
	}
	return carryLabels(all, nil)
}

// unhealthy tells whether a ClusterProfile reports its control plane unhealthy (False; Unknown
// is not a verdict, and Flotilla's own probes judge reachability).
func unhealthy(cp *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(cp.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == ConditionControlPlaneHealthy {
			return m["status"] == string(metav1.ConditionFalse)
		}
	}
	return false
}
