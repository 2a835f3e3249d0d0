package clusterwork

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// The endpoint serves what Delivery records say; Trust keeps to records written for a live
// owner, which a tenant with `edit` in the owner's namespace could still write (they read
// their owner's UID) for any cluster. Only the ValidatingAdmissionPolicy flotilla-deliveries
// keeps records to the hub controller, so the endpoint serves nothing while it is not in force.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;list;watch

// ProtectionInterval is how long the endpoint believes its last look at the Delivery policy:
// how late it may stop serving once the policy or its binding is gone.
const ProtectionInterval = 30 * time.Second

// protection is the endpoint's last look at the Delivery policy.
type protection struct {
	mu      sync.Mutex
	checked time.Time
	// problem says why records are not protected; "" when they are.
	problem string
}

// unprotected returns why the endpoint serves no work now (the body of its 503), "" when the hub
// keeps Delivery records to its controller: the policy install.DeliveryPolicyName and its
// binding exist and the binding denies. A look is believed for the handler's
// ProtectionInterval; a failed read is not remembered.
func (h *Handler) unprotected(ctx context.Context) string {
	interval := h.ProtectionInterval
	if interval <= 0 {
		interval = ProtectionInterval
	}
	p := &h.protection
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.checked.IsZero() && time.Since(p.checked) < interval {
		return unprotectedMessage(p.problem)
	}
	problem, err := h.lookAtPolicy(ctx)
	if err != nil {
		p.checked = time.Time{}
		h.Log.Error(err, "Cannot tell whether Delivery records are protected")
		return fmt.Sprintf("the hub cannot tell whether Delivery records are protected now (%v); retry", err)
	}
	if problem != p.problem || p.checked.IsZero() {
		if problem != "" {
			h.Log.Info("Serving no work: Delivery records are not protected", "reason", problem)
		} else {
			h.Log.V(1).Info("Delivery records are protected", "policy", install.DeliveryPolicyName)
		}
	}
	p.checked, p.problem = time.Now(), problem
	return unprotectedMessage(problem)
}

// lookAtPolicy returns what is missing of the Delivery policy, "" when it is in force.
func (h *Handler) lookAtPolicy(ctx context.Context) (string, error) {
	r := h.Policies
	if r == nil {
		r = h.Hub
	}
	key := client.ObjectKey{Name: install.DeliveryPolicyName}
	absent := func(err error) bool { return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) }
	if err := r.Get(ctx, key, &admissionregistrationv1.ValidatingAdmissionPolicy{}); err != nil {
		if absent(err) {
			return fmt.Sprintf("the ValidatingAdmissionPolicy %s does not exist", key.Name), nil
		}
		return "", fmt.Errorf("read the ValidatingAdmissionPolicy %s: %w", key.Name, err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := r.Get(ctx, key, binding); err != nil {
		if absent(err) {
			return fmt.Sprintf("the ValidatingAdmissionPolicyBinding %s does not exist", key.Name), nil
		}
		return "", fmt.Errorf("read the ValidatingAdmissionPolicyBinding %s: %w", key.Name, err)
	}
	switch {
	case binding.Spec.PolicyName != install.DeliveryPolicyName:
		return fmt.Sprintf("the ValidatingAdmissionPolicyBinding %s binds policy %q, not %s", key.Name, binding.Spec.PolicyName, install.DeliveryPolicyName), nil
	case !slices.Contains(binding.Spec.ValidationActions, admissionregistrationv1.Deny):
		return fmt.Sprintf("the ValidatingAdmissionPolicyBinding %s does not deny (validationActions %v)", key.Name, binding.Spec.ValidationActions), nil
	}
	return "", nil
}

// unprotectedMessage is the 503's body when records are not protected, "" when they are.
func unprotectedMessage(problem string) string {
	if problem == "" {
		return ""
	}
	return fmt.Sprintf("the hub serves no work: Delivery records are not protected (%s). Without the ValidatingAdmissionPolicy %s "+
		"and its binding (validationActions Deny) anyone who may edit an owner's namespace could write records this endpoint "+
		"would serve to agents. Install it: `flotilla install` (--crds-only too) or the chart (charts/flotilla) does; "+
		"on a hub that predates it, run either again.", problem, install.DeliveryPolicyName)
}
