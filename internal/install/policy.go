package install

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/serverside"
)

// Delivery records are Flotilla's state, in the owners' namespaces, where tenants with `edit`
// could write them. A ValidatingAdmissionPolicy keeps them to the hub controller: it refuses
// every create, update and delete of a Delivery (and of its status) by anyone else, except the
// deletes Kubernetes itself makes when an owner or a namespace goes. Readers of records do not
// rely on it alone (ledger.Trust): records written before it was installed are not believed
// either, unless the ledger wrote them for a live owner.

// DeliveryPolicyName names the policy and its binding.
const DeliveryPolicyName = "flotilla-deliveries"

// DefaultController is the identity the hub controller runs as when installed in the namespace
// flotilla-system (charts/flotilla, `flotilla install`, config/default).
const DefaultController = "system:serviceaccount:flotilla-system:flotilla-hub"

// recordDeleters may delete Delivery records besides the controller: the garbage collector
// (a record goes with its owner) and namespace deletion, as kube-controller-manager runs them
// with --use-service-account-credentials, and as itself without.
var recordDeleters = []string{
	"system:serviceaccount:kube-system:generic-garbage-collector",
	"system:serviceaccount:kube-system:namespace-controller",
	"system:kube-controller-manager",
}

// DeliveryPolicy returns the policy that lets only controllers (the user names the hub
// controller runs as, as `kubectl auth whoami` prints them) write Delivery records, and its
// binding.
func DeliveryPolicy(controllers ...string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	if len(controllers) == 0 {
		return nil, nil, fmt.Errorf("no hub controller user named: Delivery records would be writable by no one")
	}
	writers := make([]string, 0, len(controllers))
	for _, c := range controllers {
		if strings.TrimSpace(c) == "" {
			return nil, nil, fmt.Errorf("a hub controller user name is empty")
		}
		writers = append(writers, strconv.Quote(c))
	}
	deleters := make([]string, 0, len(recordDeleters))
	for _, d := range recordDeleters {
		deleters = append(deleters, strconv.Quote(d))
	}
	controller := strings.Join(controllers, ", ")
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: DeliveryPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{flotillav1.GroupVersion.Group}, APIVersions: []string{"*"},
						Resources: []string{"deliveries", "deliveries/status"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("request.userInfo.username in [%s] || (request.operation == 'DELETE' && request.userInfo.username in [%s])",
					strings.Join(writers, ", "), strings.Join(deleters, ", ")),
				Message: fmt.Sprintf("Delivery records are Flotilla's state: only the hub controller (%s) writes them. "+
					"To pin a cluster to a revision, set spec.revisionPins on the record's owner.", controller),
				Reason: ptrTo(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: DeliveryPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        DeliveryPolicyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding, nil
}

// applyDeliveryPolicy installs DeliveryPolicy(controllers...) on the hub.
func applyDeliveryPolicy(ctx context.Context, c client.Client, controllers []string, progress func(string)) error {
	policy, binding, err := DeliveryPolicy(controllers...)
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := serverside.Apply(ctx, c, obj, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	progress(fmt.Sprintf("validatingadmissionpolicy.admissionregistration.k8s.io/%s serverside-applied: only %s write Delivery records", DeliveryPolicyName, strings.Join(controllers, ", ")))
	return nil
}

// Whoami returns the user name cfg authenticates as (a SelfSubjectReview): the identity of a
// hub controller run with cfg, as `flotilla dev up` and the tests run it.
func Whoami(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("find who the hub kubeconfig authenticates as: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

func ptrTo[T any](v T) *T { return &v }

// ApplyForSelf is Apply for a hub controller that runs with cfg itself, as `flotilla dev up`,
// the tests and the benchmarks run it: only cfg's user may write Delivery records.
func ApplyForSelf(ctx context.Context, cfg *rest.Config, progress func(string)) error {
	controller, err := Whoami(ctx, cfg)
	if err != nil {
		return err
	}
	return Apply(ctx, cfg, []string{controller}, progress)
}
