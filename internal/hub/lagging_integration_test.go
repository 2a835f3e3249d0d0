package hub_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// The safety suite makes a Placement's status lag its spec on the real hub API server: an
// admission policy refuses every write of the status of a Placement labelled frozen, except
// the suite's own (as the user safetySuiteUser), so the scheduler cannot catch up while the
// suite says what the status holds.
const (
	labelFrozen      = "safety.flotilla.dev/frozen"
	safetySuiteUser  = "safety-suite"
	frozenPolicyName = "safety-frozen-placements"
)

// freezePlacements installs the admission policy, waits until the hub enforces it, and returns
// the client that writes past it.
func freezePlacements(t *testing.T, fleet *localfleet.Fleet, hub client.Client) client.Client {
	t.Helper()
	ctx := context.Background()
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: frozenPolicyName}, Spec: admissionv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: &fail,
		MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Update},
			Rule:       admissionv1.Rule{APIGroups: []string{flotillav1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"placements/status"}},
		}}}},
		Validations: []admissionv1.Validation{{
			Expression: fmt.Sprintf("!has(object.metadata.labels) || !(%q in object.metadata.labels) || request.userInfo.username == %q", labelFrozen, safetySuiteUser),
			Message:    "the safety suite holds this Placement's status",
		}},
	}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: frozenPolicyName}, Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: frozenPolicyName, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
	}}
	probe := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-p", Name: "frozen-probe", Labels: map[string]string{labelFrozen: "true"}},
		Spec: flotillav1.PlacementSpec{ClusterNames: []string{"none"}}}
	if err := createAll(ctx, hub, policy, binding, probe); err != nil {
		t.Fatal(err)
	}
	// The policy is enforced once a status write of the probe is refused.
	fleettest.Eventually(t, wait, "the hub refuses status writes of frozen Placements", func() error {
		pl := &flotillav1.Placement{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(probe), pl); err != nil {
			return err
		}
		pl.Status.LastRebalance = "probe"
		err := hub.Status().Update(ctx, pl)
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("status written (%v)", err)
	})
	cfg := rest.CopyConfig(fleet.Hub().RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: safetySuiteUser, Groups: []string{"system:masters"}}
	suite, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return suite
}

// lagging makes the owner's Placement's status lag its spec: its spec changes (the same
// clusters in another order), the scheduler cannot write that, and the status says, for the
// generation before, that it chooses only chosen. release lets the scheduler catch up and
// waits until it has.
func (s safetyRun) lagging(chosen ...string) (release func()) {
	s.t.Helper()
	pl := &flotillav1.Placement{}
	fleettest.Eventually(s.t, wait, fmt.Sprintf("Placement %s frozen, its spec changed", s.k.placement), func() error {
		if err := s.hub.Get(s.ctx, s.k.placement, pl); err != nil {
			return err
		}
		if pl.Labels == nil {
			pl.Labels = map[string]string{}
		}
		pl.Labels[labelFrozen] = "true"
		slices.Reverse(pl.Spec.ClusterNames)
		return s.hub.Update(s.ctx, pl)
	})
	fleettest.Eventually(s.t, wait, fmt.Sprintf("Placement %s's status lags: %v at generation %d", s.k.placement, chosen, pl.Generation-1), func() error {
		if err := s.hub.Get(s.ctx, s.k.placement, pl); err != nil {
			return err
		}
		pl.Status.ObservedGeneration = pl.Generation - 1
		pl.Status.Decisions = slices.DeleteFunc(pl.Status.Decisions, func(d flotillav1.ClusterDecision) bool { return !slices.Contains(chosen, d.ClusterName) })
		pl.Status.SelectedClusters = int32(len(pl.Status.Decisions))
		if len(pl.Status.Decisions) != len(chosen) {
			return fmt.Errorf("decisions %v do not hold %v", pl.Status.Decisions, chosen)
		}
		return s.suite.Status().Update(s.ctx, pl)
	})
	return func() {
		s.t.Helper()
		fleettest.Eventually(s.t, wait, fmt.Sprintf("Placement %s scheduled again", s.k.placement), func() error {
			if err := s.hub.Get(s.ctx, s.k.placement, pl); err != nil {
				return err
			}
			if _, frozen := pl.Labels[labelFrozen]; frozen {
				delete(pl.Labels, labelFrozen)
				if err := s.hub.Update(s.ctx, pl); err != nil {
					return err
				}
			}
			if pl.Status.ObservedGeneration != pl.Generation || len(pl.Status.Decisions) != len(pl.Spec.ClusterNames) {
				return fmt.Errorf("status at generation %d of %d, %d decisions", pl.Status.ObservedGeneration, pl.Generation, len(pl.Status.Decisions))
			}
			return nil
		})
	}
}
