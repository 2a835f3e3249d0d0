package membership

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
)

// spoke is a connection to a spoke, and the hub whose join objects may be changed there.
type spoke struct {
	cs    kubernetes.Interface
	hubID string
}

func (s spoke) labels() map[string]string { return map[string]string{LabelHub: s.hubID} }

// owned tells whether join from this hub created obj.
func (s spoke) owned(obj metav1.Object) bool { return obj.GetLabels()[LabelHub] == s.hubID }

func applyOptions() metav1.ApplyOptions {
	return metav1.ApplyOptions{FieldManager: spokeFieldManager, Force: true}
}

// spokeObject is one object join creates under a fixed name.
type spokeObject struct {
	kind, name string
	get        func(ctx context.Context) (metav1.Object, error)
	// del deletes the object of that name if its UID is still uid, so that only the object
	// that was checked is deleted.
	del func(ctx context.Context, uid types.UID) error
}

// deleteIf is the DeleteOptions that delete only the object of UID uid.
func deleteIf(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
}

func (s spoke) serviceAccount() spokeObject {
	sas := s.cs.CoreV1().ServiceAccounts(Namespace)
	return spokeObject{"serviceaccount", Namespace + "/" + ServiceAccount,
		func(ctx context.Context) (metav1.Object, error) {
			return sas.Get(ctx, ServiceAccount, metav1.GetOptions{})
		},
		func(ctx context.Context, uid types.UID) error { return sas.Delete(ctx, ServiceAccount, deleteIf(uid)) }}
}

func (s spoke) clusterRoleBinding() spokeObject {
	crbs := s.cs.RbacV1().ClusterRoleBindings()
	return spokeObject{"clusterrolebinding", ClusterRoleBinding,
		func(ctx context.Context) (metav1.Object, error) {
			return crbs.Get(ctx, ClusterRoleBinding, metav1.GetOptions{})
		},
		func(ctx context.Context, uid types.UID) error {
			return crbs.Delete(ctx, ClusterRoleBinding, deleteIf(uid))
		}}
}

func (s spoke) deliveryRole() spokeObject {
	crs := s.cs.RbacV1().ClusterRoles()
	return spokeObject{"clusterrole", DeliveryClusterRole,
		func(ctx context.Context) (metav1.Object, error) {
			return crs.Get(ctx, DeliveryClusterRole, metav1.GetOptions{})
		},
		func(ctx context.Context, uid types.UID) error {
			return crs.Delete(ctx, DeliveryClusterRole, deleteIf(uid))
		}}
}

func (s spoke) selfRoleBinding() spokeObject {
	rbs := s.cs.RbacV1().RoleBindings(Namespace)
	return spokeObject{"rolebinding", Namespace + "/" + selfAccess,
		func(ctx context.Context) (metav1.Object, error) { return rbs.Get(ctx, selfAccess, metav1.GetOptions{}) },
		func(ctx context.Context, uid types.UID) error { return rbs.Delete(ctx, selfAccess, deleteIf(uid)) }}
}

func (s spoke) selfRole() spokeObject {
	roles := s.cs.RbacV1().Roles(Namespace)
	return spokeObject{"role", Namespace + "/" + selfAccess,
		func(ctx context.Context) (metav1.Object, error) {
			return roles.Get(ctx, selfAccess, metav1.GetOptions{})
		},
		func(ctx context.Context, uid types.UID) error { return roles.Delete(ctx, selfAccess, deleteIf(uid)) }}
}

// NotOursError is join's refusal to take over a spoke object of one of its names that it did
// not create from this hub.
type NotOursError struct {
	Kind, Name string
}

func (e *NotOursError) Error() string {
	return fmt.Sprintf("%s %s already exists on the spoke and was not created by `flotilla join` from this hub "+
		"(it lacks the label %s with this hub's ID); join does not take over objects it did not create. "+
		"If it is left over from an older Flotilla, delete it there and join again", e.Kind, e.Name, LabelHub)
}

// preflight checks, before anything is written, that every fixed-name object join would change
// is absent or join's own from this hub, and that the ClusterRole to bind exists.
func (s spoke) preflight(ctx context.Context, role string) error {
	objs := []spokeObject{s.serviceAccount(), s.clusterRoleBinding(), s.selfRole(), s.selfRoleBinding()}
	if role == DeliveryClusterRole {
		objs = append(objs, s.deliveryRole())
	}
	for _, o := range objs {
		obj, err := o.get(ctx)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("read %s %s: %w", o.kind, o.name, err)
		case !s.owned(obj):
			return &NotOursError{Kind: o.kind, Name: o.name}
		}
	}
	if role != DeliveryClusterRole {
		_, err := s.cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterRole %q named by --role does not exist on the spoke; create it there first, or leave --role out to bind %s", role, DeliveryClusterRole)
		}
		if err != nil {
			return fmt.Errorf("read clusterrole %s: %w", role, err)
		}
	}
	return nil
}

// setUp creates or updates Flotilla's ServiceAccount, its grant (a binding to role, and
// DeliveryClusterRole with rules when that is the role) and its self-access Role, and returns
// the ServiceAccount. Call preflight first.
func (s spoke) setUp(ctx context.Context, role string, rules []rbacv1.PolicyRule) (*corev1.ServiceAccount, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := s.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: spokeFieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	sa, err := s.cs.CoreV1().ServiceAccounts(Namespace).Apply(ctx,
		corev1ac.ServiceAccount(ServiceAccount, Namespace).WithLabels(s.labels()), applyOptions())
	if err != nil {
		return nil, fmt.Errorf("apply serviceaccount %s/%s: %w", Namespace, ServiceAccount, err)
	}
	if role == DeliveryClusterRole {
		if err := s.applyDeliveryRole(ctx, rules, nil); err != nil {
			return nil, err
		}
	}
	crb, err := s.bind(ctx, role)
	if err != nil {
		return nil, err
	}
	if role == DeliveryClusterRole {
		// The default ClusterRole belongs to the binding: when Flotilla's own credentials
		// delete the binding (`flotilla unjoin`), they can no longer delete the role, and the
		// garbage collector does.
		owner := metav1ac.OwnerReference().WithAPIVersion(rbacv1.SchemeGroupVersion.String()).WithKind("ClusterRoleBinding").WithName(crb.Name).WithUID(crb.UID)
		if err := s.applyDeliveryRole(ctx, rules, owner); err != nil {
			return nil, err
		}
	}
	// The self-access Role goes with the ServiceAccount: a garbage collector removes it when
	// the ServiceAccount is deleted with Flotilla's own credentials, which cannot delete it.
	owner := metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ServiceAccount").WithName(sa.Name).WithUID(sa.UID)
	r := rbacv1ac.Role(selfAccess, Namespace).WithLabels(s.labels()).WithOwnerReferences(owner).WithRules(ruleConfigs(selfAccessRules())...)
	if _, err := s.cs.RbacV1().Roles(Namespace).Apply(ctx, r, applyOptions()); err != nil {
		return nil, fmt.Errorf("apply role %s/%s: %w", Namespace, selfAccess, err)
	}
	rb := rbacv1ac.RoleBinding(selfAccess, Namespace).WithLabels(s.labels()).WithOwnerReferences(owner).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("Role").WithName(selfAccess)).
		WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(ServiceAccount).WithNamespace(Namespace))
	if _, err := s.cs.RbacV1().RoleBindings(Namespace).Apply(ctx, rb, applyOptions()); err != nil {
		return nil, fmt.Errorf("apply rolebinding %s/%s: %w", Namespace, selfAccess, err)
	}
	if role != DeliveryClusterRole {
		// A previous join's default grant is no longer bound: remove it.
		if _, err := s.removeOwned(ctx, s.deliveryRole()); err != nil {
			return nil, err
		}
	}
	return sa, nil
}

// applyDeliveryRole creates or updates DeliveryClusterRole with rules, owned by owner if not nil.
func (s spoke) applyDeliveryRole(ctx context.Context, rules []rbacv1.PolicyRule, owner *metav1ac.OwnerReferenceApplyConfiguration) error {
	cr := rbacv1ac.ClusterRole(DeliveryClusterRole).WithLabels(s.labels()).WithRules(ruleConfigs(rules)...)
	if owner != nil {
		cr.WithOwnerReferences(owner)
	}
	if _, err := s.cs.RbacV1().ClusterRoles().Apply(ctx, cr, applyOptions()); err != nil {
		return fmt.Errorf("apply clusterrole %s: %w", DeliveryClusterRole, err)
	}
	return nil
}

// bind points ClusterRoleBinding at role. A binding's roleRef cannot change, so join's own
// binding to another role is replaced.
func (s spoke) bind(ctx context.Context, role string) (*rbacv1.ClusterRoleBinding, error) {
	crbs := s.cs.RbacV1().ClusterRoleBindings()
	crb, err := crbs.Get(ctx, ClusterRoleBinding, metav1.GetOptions{})
	switch {
	case err == nil && s.owned(crb) && (crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != role):
		if err := crbs.Delete(ctx, ClusterRoleBinding, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("replace clusterrolebinding %s: %w", ClusterRoleBinding, err)
		}
	case err == nil && !s.owned(crb):
		return nil, &NotOursError{Kind: "clusterrolebinding", Name: ClusterRoleBinding}
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read clusterrolebinding %s: %w", ClusterRoleBinding, err)
	}
	ac := rbacv1ac.ClusterRoleBinding(ClusterRoleBinding).WithLabels(s.labels()).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(role)).
		WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(ServiceAccount).WithNamespace(Namespace))
	crb, err = crbs.Apply(ctx, ac, applyOptions())
	if err != nil {
		return nil, fmt.Errorf("apply clusterrolebinding %s to clusterrole %s: %w", ClusterRoleBinding, role, err)
	}
	return crb, nil
}

// removal is what removeOwned did with a spoke object.
type removal int

const (
	// removed: join from this hub created it, and it is deleted now.
	removed removal = iota
	// absent: there is no object of that name, so nothing was deleted (and, for the
	// ServiceAccount, no token of it was revoked: there was none).
	absent
	// notOurs: an object of that name exists that join from this hub did not create; it stays.
	notOurs
)

// removeOwned deletes o if join from this hub created it (it carries this hub's LabelHub), and
// says what it found: an object someone else made stays, and nothing is reported removed that
// was not there.
func (s spoke) removeOwned(ctx context.Context, o spokeObject) (removal, error) {
	obj, err := o.get(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return absent, nil
	case err != nil:
		return notOurs, fmt.Errorf("read %s %s: %w", o.kind, o.name, err)
	case !s.owned(obj):
		return notOurs, nil
	}
	if err := o.del(ctx, obj.GetUID()); err != nil && !apierrors.IsNotFound(err) {
		return notOurs, fmt.Errorf("delete %s %s: %w", o.kind, o.name, err)
	}
	return removed, nil
}

// ruleConfigs turns rules into apply configurations.
func ruleConfigs(rules []rbacv1.PolicyRule) []*rbacv1ac.PolicyRuleApplyConfiguration {
	out := make([]*rbacv1ac.PolicyRuleApplyConfiguration, 0, len(rules))
	for _, r := range rules {
		ac := rbacv1ac.PolicyRule().WithVerbs(r.Verbs...)
		if len(r.APIGroups) > 0 {
			ac.WithAPIGroups(r.APIGroups...)
		}
		if len(r.Resources) > 0 {
			ac.WithResources(r.Resources...)
		}
		if len(r.ResourceNames) > 0 {
			ac.WithResourceNames(r.ResourceNames...)
		}
		if len(r.NonResourceURLs) > 0 {
			ac.WithNonResourceURLs(r.NonResourceURLs...)
		}
		out = append(out, ac)
	}
	return out
}

// deliveryRules are the rules of DeliveryClusterRole for this spoke, from what it serves now.
// A group whose discovery fails (an aggregated API that is down) is left out of the grant.
func (s spoke) deliveryRules(apiGroups []string) ([]rbacv1.PolicyRule, error) {
	if apiGroups == nil {
		apiGroups = DefaultAPIGroups
	}
	_, resources, err := s.cs.Discovery().ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discover the spoke's resources for Flotilla's grant: %w", err)
	}
	return deliveryRules(resources, apiGroups)
}

// removeNamespaceBindings deletes the RoleBindings of the namespace identities, in every
// namespace: those named NamespaceRoleBinding, labelled NamespaceIdentityLabels, whose one
// subject is a namespace identity.
func (s spoke) removeNamespaceBindings(ctx context.Context, progress func(string)) error {
	list, err := s.cs.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(NamespaceIdentityLabels).String()})
	if err != nil {
		return fmt.Errorf("list the namespace identities' rolebindings: %w", err)
	}
	removed := 0
	for _, rb := range list.Items {
		if rb.Name != NamespaceRoleBinding || len(rb.Subjects) != 1 || rb.Subjects[0].Kind != rbacv1.ServiceAccountKind ||
			rb.Subjects[0].Namespace != Namespace || rb.Subjects[0].Name != NamespaceServiceAccount(rb.Namespace) {
			continue
		}
		uid := rb.UID
		err := s.cs.RbacV1().RoleBindings(rb.Namespace).Delete(ctx, rb.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete rolebinding %s/%s: %w", rb.Namespace, rb.Name, err)
		}
		removed++
	}
	if removed > 0 {
		progress(fmt.Sprintf("spoke: %d rolebindings %s of the namespace identities removed", removed, NamespaceRoleBinding))
	}
	return nil
}
