package deliver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Spoke RBAC stands behind tenancy. A namespaced owner's writes (applies, dry runs, status) are
// made as its namespace's identity (membership.NamespaceUser), which Flotilla impersonates and
// which only the RoleBinding membership.NamespaceRoleBinding, in that namespace, grants
// anything: were Flotilla's own tenancy check (decide.CheckScope) ever wrong, the spoke would
// still refuse the write. The identity is granted the spoke's grant to Flotilla (the join's
// ClusterRole) in that namespace; on a cluster that was not joined, a ClusterRole
// membership.NamespaceClusterRole that Flotilla writes.
//
// The cost is a request header: the impersonating client shares the cluster's HTTP transport,
// and the RoleBinding is read once per namespace and engaged instance, written only when
// missing or pointing elsewhere.

// confinedTo is the namespace an owner's writes are confined to, "" when they are not.
func confinedTo(owner render.Owner, s decide.Strategy) string {
	if owner.OnSpoke() && s.ClusterWide {
		return ""
	}
	return owner.Namespace
}

// bindingSettle bounds how long a write retries being refused soon after its namespace's
// RoleBinding was written: the spoke's authorizer learns of it within moments.
const bindingSettle = 10 * time.Second

// applierFor returns the applier for writes confined to namespace ns: Flotilla's own when ns
// is "", that namespace's identity's otherwise.
func (w *clusterWorker) applierFor(ctx context.Context, cl cluster.Cluster, ns string) (*spokeApplier, error) {
	if ns == "" {
		return w.appliers.get(cl)
	}
	return w.namespaceApplier(ctx, cl, ns)
}

// namespaceApplier returns the applier acting as namespace ns's identity on cl, writing its
// RoleBinding first if this instance has not seen it yet.
func (w *clusterWorker) namespaceApplier(ctx context.Context, cl cluster.Cluster, ns string) (*spokeApplier, error) {
	base, err := w.appliers.get(cl)
	if err != nil {
		return nil, err
	}
	return w.appliers.namespace(base, ns, func(a *spokeApplier) (bool, error) {
		written, err := w.bindNamespace(ctx, cl, ns)
		if apierrors.IsForbidden(err) {
			// A grant that does not let Flotilla manage RoleBindings (a narrow --role, an
			// imported credential): Flotilla's own tenancy check is all there is here.
			w.d.log.Info("Cannot set up the namespace identity on this cluster (its grant does not allow managing RoleBindings); a namespaced owner's writes there are made as Flotilla",
				"cluster", w.name, "namespace", ns)
			return false, nil
		}
		if written {
			a.boundAt = time.Now()
		}
		return err == nil, err
	})
}

// impersonating returns a copy of base acting as user, on the same HTTP transport.
func impersonating(base *spokeApplier, user string) (*spokeApplier, error) {
	httpClient := *base.cl.GetHTTPClient()
	httpClient.Transport = transport.NewImpersonatingRoundTripper(transport.ImpersonationConfig{UserName: user}, httpClient.Transport)
	return newSpokeApplierWith(base.cl, &httpClient, base.mappings)
}

// bindNamespace makes sure the RoleBinding granting namespace ns's identity exists and refers
// to the cluster's grant, creating ns when it is missing. It reports whether it wrote anything.
func (w *clusterWorker) bindNamespace(ctx context.Context, cl cluster.Cluster, ns string) (bool, error) {
	role := membership.NamespaceClusterRole
	if w.d.opts.Grant != nil {
		if g := w.d.opts.Grant(w.name); g != "" {
			role = g
		}
	}
	want := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: membership.NamespaceRoleBinding, Namespace: ns,
			Labels: membership.NamespaceIdentityLabels},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: membership.Namespace,
			Name: membership.NamespaceServiceAccount(ns)}},
	}
	live := &rbacv1.RoleBinding{}
	err := cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(want), live)
	switch {
	case err == nil && live.RoleRef == want.RoleRef && len(live.Subjects) == 1 && live.Subjects[0] == want.Subjects[0]:
		return false, nil
	case err == nil:
		// The grant changed (joined again with another role): a roleRef cannot change.
		if err := cl.GetClient().Delete(ctx, live, client.Preconditions{UID: &live.UID}); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("replace rolebinding %s/%s: %w", ns, want.Name, err)
		}
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("read rolebinding %s/%s: %w", ns, want.Name, err)
	}
	if role == membership.NamespaceClusterRole {
		if err := w.writeNamespaceRole(ctx, cl); err != nil {
			return false, err
		}
	}
	err = cl.GetClient().Create(ctx, want, client.FieldOwner(FieldManager))
	countWrite(w.name, "namespace-identity", err)
	if apierrors.IsNotFound(err) {
		if err := w.createNamespace(ctx, cl, ns, "the identity of namespace "+ns); err != nil {
			return false, err
		}
		err = cl.GetClient().Create(ctx, want, client.FieldOwner(FieldManager))
		countWrite(w.name, "namespace-identity", err)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("grant the identity of namespace %s (rolebinding %s to clusterrole %s): %w", ns, want.Name, role, err)
	}
	return true, nil
}

// writeNamespaceRole writes membership.NamespaceClusterRole, the namespace identities' grant on
// a cluster that was not joined: what delivery does, on every resource, within the namespace
// a RoleBinding names. Flotilla's credentials there are the source's own, which hold it.
func (w *clusterWorker) writeNamespaceRole(ctx context.Context, cl cluster.Cluster) error {
	want := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: membership.NamespaceClusterRole, Labels: membership.NamespaceIdentityLabels},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: membership.DeliveryVerbs}},
	}
	live := &rbacv1.ClusterRole{}
	if err := cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(want), live); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("read clusterrole %s: %w", want.Name, err)
	}
	err := cl.GetClient().Create(ctx, want, client.FieldOwner(FieldManager))
	countWrite(w.name, "namespace-identity", err)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create clusterrole %s: %w", want.Name, err)
	}
	return nil
}

// createNamespace creates a missing namespace, unmarked, so that it is never pruned with its
// contents; why says for whom, in its owner annotation.
func (w *clusterWorker) createNamespace(ctx context.Context, cl cluster.Cluster, ns, why string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Annotations: map[string]string{flotillav1.AnnotationOwner: "created for " + why}}}
	err := cl.GetClient().Create(ctx, obj, client.FieldOwner(FieldManager))
	countWrite(w.name, "create-namespace", err)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// settled retries write, for up to bindingSettle, while the spoke refuses it within a minute of
// a's RoleBinding being written: a busy spoke's authorizer may learn of the binding late, and
// the first write may itself come late after it.
func (a *spokeApplier) settled(ctx context.Context, write func() error) error {
	err := write()
	if !apierrors.IsForbidden(err) || a.boundAt.IsZero() || time.Since(a.boundAt) > time.Minute {
		return err
	}
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, bindingSettle, false, func(context.Context) (bool, error) {
		err = write()
		return !apierrors.IsForbidden(err), nil
	})
	return err
}
