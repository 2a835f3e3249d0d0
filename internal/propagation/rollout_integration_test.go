package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/propagation"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestRolloutFollowsItsStages: a Placement's rollout takes a Propagation's new revision to
// the canary stage first, waits for an approval before prod, then reaches the rest; the
// spokes' audit logs show each cluster written in that order, and none of prod's written
// before the approval. A revision the canary refuses halts the rollout: the status names the
// cluster, and the audit logs show no write to any other cluster.
func TestRolloutFollowsItsStages(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "canary", "spoke-b": "prod", "spoke-c": "edge"})
	ctx := context.Background()
	refuse(t, e.spokes["spoke-a"], "red")
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, Rollout: &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
			{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "canary"}}},
			{Name: "prod", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "prod"}}, Approval: flotillav1.ApprovalRequired},
		}}}}
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, placement)
	e.create(t, configMap("settings", nil, "blue"))
	e.create(t, settingsPropagation())
	// The first delivery is not staged: nothing runs an older revision.
	e.values(t, map[string]string{"spoke-a": "blue", "spoke-b": "blue", "spoke-c": "blue"})

	changed := time.Now()
	e.setValue(t, "settings", "green")
	e.values(t, map[string]string{"spoke-a": "green"})
	status := e.rolloutPhase(t, flotillav1.RolloutWaitingForApproval)
	e.values(t, map[string]string{"spoke-b": "blue", "spoke-c": "blue"})
	// Each cluster's row says where it stands; the conditions, kstatus' too, say it waits.
	waiting := e.settingsStatus(t)
	expectRows(t, waiting, map[string]string{"spoke-a": "canary/Succeeded@" + status.Revision, "spoke-b": "prod/WaitingForApproval@old", "spoke-c": "rest/Pending@old"}, status.Revision)
	expectCondition(t, waiting.Rollout.Conditions, flotillav1.RolloutConditionProgressing, metav1.ConditionTrue, "WaitingForApproval")
	expectCondition(t, waiting.Rollout.Conditions, flotillav1.RolloutConditionComplete, metav1.ConditionFalse, "WaitingForApproval")
	expectCondition(t, waiting.Conditions, "Reconciling", metav1.ConditionTrue, "RolloutWaitingForApproval")
	// A cluster not reached yet is still kept true: to the revision it runs, not the new one.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := e.spokes["spoke-b"].Get(ctx, client.ObjectKey{Namespace: "team", Name: "settings"}, cm); err != nil {
			return err
		}
		cm.Data["v"] = "tampered"
		return e.spokes["spoke-b"].Update(ctx, cm)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.values(t, map[string]string{"spoke-b": "blue"})
	// The passes since (spoke-b's drift corrected) changed nothing of the rollout: its times stay.
	still := e.settingsStatus(t)
	for i := range waiting.ClusterResults {
		was, now := waiting.ClusterResults[i].Rollout, rowOf(still, waiting.ClusterResults[i].Cluster)
		if was == nil || now == nil || !was.Since.Equal(&now.Since) {
			t.Errorf("%s's row moved from %+v to %+v though nothing changed", waiting.ClusterResults[i].Cluster, was, now)
		}
	}
	if was, now := meta.FindStatusCondition(waiting.Rollout.Conditions, flotillav1.RolloutConditionProgressing),
		meta.FindStatusCondition(still.Rollout.Conditions, flotillav1.RolloutConditionProgressing); now == nil || !was.LastTransitionTime.Equal(&now.LastTransitionTime) {
		t.Errorf("Progressing moved from %+v to %+v though nothing changed", was, now)
	}
	// flotilla plan shows the same: spoke-b and spoke-c held at the revision they run, spoke-a at
	// the new one.
	p := &flotillav1.Propagation{}
	if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil {
		t.Fatal(err)
	}
	d, err := propagation.Preview(ctx, e.hub, p, hub.RecordOwners())
	if err != nil {
		t.Fatal(err)
	}
	for _, cd := range d.Clusters {
		if held := cd.Pinned != ""; held != (cd.Cluster != "spoke-a") || len(cd.Objects) != 1 || (cd.Objects[0].Object["data"].(map[string]any)["v"] == "blue") != held {
			t.Errorf("plan of %s: pinned %q, objects %v; want spoke-a at green, spoke-b and spoke-c held at blue", cd.Cluster, cd.Pinned, cd.Objects)
		}
	}
	approved := time.Now()
	e.annotate(t, flotillav1.AnnotationApprove, "prod@"+status.Revision)
	e.values(t, map[string]string{"spoke-b": "green", "spoke-c": "green"})
	e.rolloutPhase(t, flotillav1.RolloutComplete)
	complete := e.settingsStatus(t)
	expectRows(t, complete, map[string]string{"spoke-a": "canary/Succeeded@" + status.Revision, "spoke-b": "prod/Succeeded@" + status.Revision, "spoke-c": "rest/Succeeded@" + status.Revision}, status.Revision)
	expectCondition(t, complete.Rollout.Conditions, flotillav1.RolloutConditionComplete, metav1.ConditionTrue, "Complete")
	expectCondition(t, complete.Rollout.Conditions, flotillav1.RolloutConditionProgressing, metav1.ConditionFalse, "Complete")
	if c := meta.FindStatusCondition(complete.Conditions, "Reconciling"); c != nil {
		t.Errorf("a complete rollout is still Reconciling: %+v", c)
	}
	e.stageEvent(t, "stage prod completed revision "+status.Revision)
	last := map[string]time.Time{}
	for _, spoke := range []string{"spoke-a", "spoke-b", "spoke-c"} {
		last[spoke] = e.lastConfigMapWrite(t, spoke, "settings", changed)
	}
	if !last["spoke-a"].Before(approved) || !approved.Before(last["spoke-b"]) || !last["spoke-b"].Before(last["spoke-c"]) {
		t.Errorf("writes at spoke-a %s, spoke-b %s, spoke-c %s, approval at %s: want spoke-a, then the approval, then spoke-b, then spoke-c",
			last["spoke-a"].Format(time.StampMicro), last["spoke-b"].Format(time.StampMicro), last["spoke-c"].Format(time.StampMicro), approved.Format(time.StampMicro))
	}

	// A revision the canary refuses halts the rollout before any other cluster.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.hub.Get(ctx, client.ObjectKeyFromObject(placement), placement); err != nil {
			return err
		}
		placement.Spec.Rollout.Stages[1].Approval = flotillav1.ApprovalNone
		return e.hub.Update(ctx, placement)
	})
	if err != nil {
		t.Fatal(err)
	}
	broken := time.Now()
	e.setValue(t, "settings", "red")
	status = e.rolloutPhase(t, flotillav1.RolloutHalted)
	if !strings.Contains(status.Message, "spoke-a: ") || !strings.Contains(status.Message, "red is not allowed here") {
		t.Errorf("halt message %q does not name the cluster and why", status.Message)
	}
	for _, spoke := range []string{"spoke-b", "spoke-c"} {
		if writes, _ := e.configMapWrites(t, spoke, "settings", broken); writes != 0 {
			t.Errorf("%s written %d times after the canary refused the revision", spoke, writes)
		}
	}
	e.values(t, map[string]string{"spoke-a": "green", "spoke-b": "green", "spoke-c": "green"})

	// Undone to the first revision (blue): every cluster returns to it while red stays the
	// latest, and the status says so.
	kept, err := (&revisions.Store{Metadata: e.hub}).List(ctx, render.Owner{Kind: "Propagation", Namespace: "team", Name: "settings"})
	if err != nil || len(kept) != 3 || kept[2].Name != status.Revision {
		t.Fatalf("kept revisions %+v (%v), want blue, green and red (%s)", kept, err, status.Revision)
	}
	e.annotate(t, flotillav1.AnnotationUndo, kept[0].Name+"@"+status.Revision)
	e.values(t, map[string]string{"spoke-a": "blue", "spoke-b": "blue", "spoke-c": "blue"})
	// The phase turns RolledBack with the first cluster back; the count follows each report.
	e.rolloutPhaseSaying(t, flotillav1.RolloutRolledBack, "3 of 3 clusters run "+kept[0].Name)

	// onFailure: Rollback. The undo taken away, red rolls out again from the canary, which
	// refuses it: Flotilla undoes the rollout itself (the annotation names blue, which every
	// cluster runs), and no other cluster is written.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.hub.Get(ctx, client.ObjectKeyFromObject(placement), placement); err != nil {
			return err
		}
		placement.Spec.Rollout.OnFailure = flotillav1.RolloutRollback
		return e.hub.Update(ctx, placement)
	})
	if err != nil {
		t.Fatal(err)
	}
	again := time.Now()
	p = &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, flotillav1.AnnotationUndo)
	if err := e.hub.Patch(ctx, p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "Flotilla rolls red back by itself", func() error {
		if err := e.hub.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		if got := p.Annotations[flotillav1.AnnotationUndo]; got != kept[0].Name+"@"+status.Revision {
			return fmt.Errorf("undo %q", got)
		}
		if r := p.Status.Rollout; r == nil || r.Phase != flotillav1.RolloutRolledBack {
			return fmt.Errorf("rollout %+v", r)
		}
		return nil
	})
	e.values(t, map[string]string{"spoke-a": "blue", "spoke-b": "blue", "spoke-c": "blue"})
	for _, spoke := range []string{"spoke-b", "spoke-c"} {
		if writes, _ := e.configMapWrites(t, spoke, "settings", again); writes != 0 {
			t.Errorf("%s written %d times while red rolled out again and back", spoke, writes)
		}
	}
}

// settingsPropagation delivers the hub ConfigMap team/settings where Placement all says.
func settingsPropagation() *flotillav1.Propagation {
	return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}},
			PlacementRef: flotillav1.PlacementRef{Name: "all"}}}
}

// values waits until data.v of each spoke's copy of team/settings is as want says.
func (e *env) values(t *testing.T, want map[string]string) {
	t.Helper()
	fleettest.Eventually(t, wait, fmt.Sprintf("the spokes have %v", want), func() error {
		for spoke, v := range want {
			if got, err := e.valueOnSpoke(spoke, "settings"); err != nil || got != v {
				return fmt.Errorf("%s has %q (%v)", spoke, got, err)
			}
		}
		return nil
	})
}

// refuse makes a spoke refuse ConfigMaps whose data.v is value, as a policy of its own would:
// a ValidatingAdmissionPolicy, which the API server runs itself.
func refuse(t *testing.T, spoke client.Client, value string) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-" + value},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: fmt.Sprintf("!has(object.data) || !('v' in object.data) || object.data.v != %q", value),
				Message: value + " is not allowed here"}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-" + value},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-" + value,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	for _, obj := range []client.Object{policy, binding} {
		if err := spoke.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	fleettest.Eventually(t, wait, "the spoke refuses "+value, func() error {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Data: map[string]string{"v": value}}
		if err := spoke.Create(ctx, probe, client.DryRunAll); err == nil {
			return fmt.Errorf("accepted")
		}
		return nil
	})
}

// setValue changes data.v of a hub ConfigMap of namespace team.
func (e *env) setValue(t *testing.T, name, value string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, cm); err != nil {
			return err
		}
		cm.Data["v"] = value
		return e.hub.Update(context.Background(), cm)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// annotate sets an annotation on the Propagation settings.
func (e *env) annotate(t *testing.T, key, value string) {
	t.Helper()
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	if err := e.hub.Patch(context.Background(), p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// rolloutPhase waits until the Propagation settings' rollout is in phase.
func (e *env) rolloutPhase(t *testing.T, phase flotillav1.RolloutPhase) flotillav1.RolloutStatus {
	t.Helper()
	var status flotillav1.RolloutStatus
	fleettest.Eventually(t, wait, "rollout "+string(phase), func() error {
		p := &flotillav1.Propagation{}
		if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil {
			return err
		}
		if p.Status.Rollout == nil || p.Status.Rollout.Phase != phase {
			return fmt.Errorf("rollout %+v", p.Status.Rollout)
		}
		status = *p.Status.Rollout
		return nil
	})
	return status
}

// rolloutPhaseSaying waits for the rollout's phase with a message that says want.
func (e *env) rolloutPhaseSaying(t *testing.T, phase flotillav1.RolloutPhase, want string) {
	t.Helper()
	fleettest.Eventually(t, wait, "rollout "+string(phase)+" saying "+want, func() error {
		p := &flotillav1.Propagation{}
		if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil {
			return err
		}
		if r := p.Status.Rollout; r == nil || r.Phase != phase || !strings.Contains(r.Message, want) {
			return fmt.Errorf("rollout %+v", r)
		}
		return nil
	})
}

// settingsStatus is the status of the Propagation settings as the hub has it now.
func (e *env) settingsStatus(t *testing.T) flotillav1.PropagationStatus {
	t.Helper()
	p := &flotillav1.Propagation{}
	if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil {
		t.Fatal(err)
	}
	if p.Status.Rollout == nil {
		t.Fatalf("no status.rollout: %+v", p.Status)
	}
	return p.Status
}

func rowOf(s flotillav1.PropagationStatus, cluster string) *flotillav1.ClusterRolloutState {
	for _, r := range s.ClusterResults {
		if r.Cluster == cluster {
			return r.Rollout
		}
	}
	return nil
}

// expectRows checks each cluster's rollout row: stage/state@revision, "old" for a revision
// other than latest.
func expectRows(t *testing.T, s flotillav1.PropagationStatus, want map[string]string, latest string) {
	t.Helper()
	for c, w := range want {
		r := rowOf(s, c)
		if r == nil {
			t.Errorf("%s has no rollout row: %+v", c, s.ClusterResults)
			continue
		}
		rev := r.Revision
		if rev != latest && rev != "" {
			rev = "old"
		}
		if got := r.Stage + "/" + string(r.State) + "@" + rev; got != w || r.Since.IsZero() {
			t.Errorf("%s's rollout row %s since %s, want %s", c, got, r.Since, w)
		}
	}
}

func expectCondition(t *testing.T, conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	if c := meta.FindStatusCondition(conds, typ); c == nil || c.Status != status || c.Reason != reason {
		t.Errorf("condition %s %+v, want %s/%s", typ, c, status, reason)
	}
}

// stageEvent waits for a RolloutStageComplete Event of the Propagation settings that says msg.
func (e *env) stageEvent(t *testing.T, msg string) {
	t.Helper()
	fleettest.Eventually(t, wait, "Event: "+msg, func() error {
		var events corev1.EventList
		if err := e.hub.List(context.Background(), &events, client.InNamespace("team")); err != nil {
			return err
		}
		var seen []string
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "settings" && ev.InvolvedObject.Kind == "Propagation" && ev.Reason == "RolloutStageComplete" {
				if strings.HasPrefix(ev.Message, msg) {
					return nil
				}
				seen = append(seen, ev.Message)
			}
		}
		return fmt.Errorf("stage Events %q", seen)
	})
}

// lastConfigMapWrite is when Flotilla last wrote a ConfigMap of a spoke since a time (its audit log).
func (e *env) lastConfigMapWrite(t *testing.T, plane, name string, since time.Time) time.Time {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Name == name &&
			!strings.Contains(ev.RequestURI, "dryRun=") && ev.ResponseStatus.Code < 300 && ev.StageTimestamp.After(since) {
			last = ev.StageTimestamp
		}
	}
	if last.IsZero() {
		t.Fatalf("no write of %s on %s since %s", name, plane, since)
	}
	return last
}
