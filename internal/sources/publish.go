package sources

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

const (
	// publishFieldManager owns the ClusterProfiles Flotilla publishes.
	publishFieldManager = "flotilla-publish"
	// annotationPublishHash on a published ClusterProfile is the hash of its applied metadata
	// and spec: equal means there is nothing to write. Not an API contract.
	annotationPublishHash = "flotilla.dev/publish-hash"
	// PropertyClusterID is the published property holding a Cluster's flotilla.dev/cluster-id
	// (the UID of the spoke's kube-system namespace).
	PropertyClusterID = flotillav1.LabelClusterID
)

// publisher keeps one ClusterProfile per Flotilla Cluster in one namespace, so that consumers
// of the cluster inventory API (Kueue's MultiKueue, Argo CD, multicluster-runtime) see
// Flotilla's fleet: labelled x-k8s.io/cluster-manager=<manager>, with the Cluster's labels, its
// Ready condition as ControlPlaneHealthy, its Kubernetes version and identity. It publishes no
// access providers: Flotilla's credentials never leave the hub, and a consumer brings its own.
// Clusters imported from a ClusterProfile are not published again.
type publisher struct {
	hub       client.Client
	namespace string
	manager   string
}

// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles/status,verbs=get;update;patch

func (p *publisher) setup(mgr manager.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == p.namespace && o.GetLabels()[LabelClusterManager] == p.manager
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("publish-cluster-profiles").
		For(&flotillav1.Cluster{}).
		Watches(clusterProfile(), handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
		}), builder.WithPredicates(ours)).
		Complete(p)
}

func (p *publisher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c := &flotillav1.Cluster{}
	err := p.hub.Get(ctx, req.NamespacedName, c)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	current := clusterProfile()
	err2 := p.hub.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: req.Name}, current)
	if err2 != nil && !apierrors.IsNotFound(err2) {
		return reconcile.Result{}, err2
	}
	exists, ours := err2 == nil, err2 == nil && current.GetLabels()[LabelClusterManager] == p.manager
	if apierrors.IsNotFound(err) || !c.DeletionTimestamp.IsZero() || c.Labels[flotillav1.LabelSource] == flotillav1.SourceClusterProfile {
		if !ours {
			return reconcile.Result{}, nil
		}
		uid := current.GetUID()
		if err := p.hub.Delete(ctx, current, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("delete ClusterProfile %s/%s: %w", p.namespace, req.Name, err)
		}
		return reconcile.Result{}, nil
	}
	if exists && !ours {
		ctrl.LoggerFrom(ctx).Info("Not publishing a ClusterProfile: one of this name belongs to another cluster manager",
			"clusterProfile", p.namespace+"/"+req.Name, "manager", current.GetLabels()[LabelClusterManager])
		return reconcile.Result{}, nil
	}
	want := p.desired(c)
	if !exists || current.GetAnnotations()[annotationPublishHash] != want.GetAnnotations()[annotationPublishHash] {
		if err := p.hub.Apply(ctx, client.ApplyConfigurationFromUnstructured(want), client.FieldOwner(publishFieldManager), client.ForceOwnership); err != nil {
			return reconcile.Result{}, fmt.Errorf("apply ClusterProfile %s/%s: %w", p.namespace, req.Name, err)
		}
	}
	status := p.desiredStatus(c)
	if exists && sameStatus(current, status) {
		return reconcile.Result{}, nil
	}
	body := clusterProfile()
	body.SetNamespace(p.namespace)
	body.SetName(c.Name)
	body.Object["status"] = status
	if err := p.hub.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(body), client.FieldOwner(publishFieldManager), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("apply status of ClusterProfile %s/%s: %w", p.namespace, req.Name, err)
	}
	return reconcile.Result{}, nil
}

// desired is the apply body of a Cluster's ClusterProfile, without status.
func (p *publisher) desired(c *flotillav1.Cluster) *unstructured.Unstructured {
	labels := map[string]any{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	labels[LabelClusterManager] = p.manager
	u := clusterProfile()
	u.Object["metadata"] = map[string]any{"name": c.Name, "namespace": p.namespace, "labels": labels}
	u.Object["spec"] = map[string]any{"displayName": c.Name, "clusterManager": map[string]any{"name": p.manager}}
	body, _ := json.Marshal(u.Object)
	u.SetAnnotations(map[string]string{annotationPublishHash: hashOf(body)[:16]})
	return u
}

// desiredStatus is a Cluster's ClusterProfile status: strings only, so that it compares with
// what the hub returns as it is.
func (p *publisher) desiredStatus(c *flotillav1.Cluster) map[string]any {
	status := map[string]any{}
	if ready := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady); ready != nil {
		cond := metav1.Condition{
			Type: ConditionControlPlaneHealthy, Status: ready.Status, Reason: ready.Reason, Message: ready.Message,
			LastTransitionTime: ready.LastTransitionTime,
		}
		status["conditions"] = []any{toMap(cond)}
	}
	if v := c.Status.KubernetesVersion; v != "" {
		status["version"] = map[string]any{"kubernetes": v}
	}
	if id := c.Labels[flotillav1.LabelClusterID]; id != "" {
		status["properties"] = []any{map[string]any{"name": PropertyClusterID, "value": id}}
	}
	return status
}

// sameStatus compares a ClusterProfile's status with the wanted one.
func sameStatus(current *unstructured.Unstructured, want map[string]any) bool {
	have, _, _ := unstructured.NestedMap(current.Object, "status")
	if have == nil {
		have = map[string]any{}
	}
	a, errA := json.Marshal(have)
	b, errB := json.Marshal(want)
	return errA == nil && errB == nil && string(a) == string(b)
}

func toMap(v any) map[string]any {
	data, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}
