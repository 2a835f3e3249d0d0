package statusconds

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func cond(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: reason + " message"}
}

const (
	yes = metav1.ConditionTrue
	no  = metav1.ConditionFalse
)

// kstatusOf computes what kstatus (sigs.k8s.io/cli-utils), as kubectl's and GitOps tools'
// health checks do, says of an object.
func kstatusOf(t *testing.T, obj client.Object) status.Status {
	t.Helper()
	gvks, _, err := install.Scheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

func TestPropagationsReadByKstatus(t *testing.T) {
	for _, tc := range []struct {
		name       string
		generation int64 // observed: 1
		conds      []metav1.Condition
		want       status.Status
	}{
		{"applied and ready", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, yes, flotillav1.ReasonApplied), cond(flotillav1.PropagationReady, yes, flotillav1.ReasonReady)}, status.CurrentStatus},
		{"a new generation not observed yet", 2, []metav1.Condition{cond(flotillav1.PropagationApplied, yes, flotillav1.ReasonApplied), cond(flotillav1.PropagationReady, yes, flotillav1.ReasonReady)}, status.InProgressStatus},
		{"applied, not ready yet", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, yes, flotillav1.ReasonApplied), cond(flotillav1.PropagationReady, no, flotillav1.ReasonNotReady)}, status.InProgressStatus},
		{"delivering", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, no, flotillav1.ReasonProgressing), cond(flotillav1.PropagationReady, no, flotillav1.ReasonNotApplied)}, status.InProgressStatus},
		{"a cluster refuses an object", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, no, flotillav1.ReasonApplyFailed), cond(flotillav1.PropagationReady, no, flotillav1.ReasonNotApplied)}, status.FailedStatus},
		{"waiting for a prune confirmation", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, no, flotillav1.ReasonPruneBlocked)}, status.FailedStatus},
		{"a move past its deadline", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, no, flotillav1.ReasonMoveInProgress), cond(flotillav1.PropagationMoving, yes, flotillav1.ReasonMoveStalled)}, status.FailedStatus},
		{"no cluster chosen", 1, []metav1.Condition{cond(flotillav1.PropagationApplied, no, flotillav1.ReasonNoClusters)}, status.CurrentStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := flotillav1.PropagationStatus{ObservedGeneration: 1, Conditions: tc.conds}
			Propagation(&st.Conditions, 1)
			p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", Generation: tc.generation}, Status: st}
			if got := kstatusOf(t, p); got != tc.want {
				t.Errorf("kstatus %s, want %s; conditions %v", got, tc.want, st.Conditions)
			}
			cp := &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "base", Generation: tc.generation}, Status: st}
			if got := kstatusOf(t, cp); got != tc.want {
				t.Errorf("ClusterPropagation: kstatus %s, want %s", got, tc.want)
			}
			if meta.FindStatusCondition(st.Conditions, Reconciling) != nil && meta.FindStatusCondition(st.Conditions, Stalled) != nil {
				t.Errorf("both Reconciling and Stalled: %v", st.Conditions)
			}
		})
	}
	// Back to done: Reconciling and Stalled go.
	conds := []metav1.Condition{cond(flotillav1.PropagationApplied, no, flotillav1.ReasonApplyFailed)}
	Propagation(&conds, 1)
	meta.SetStatusCondition(&conds, cond(flotillav1.PropagationApplied, yes, flotillav1.ReasonApplied))
	meta.SetStatusCondition(&conds, cond(flotillav1.PropagationReady, yes, flotillav1.ReasonReady))
	Propagation(&conds, 1)
	if len(conds) != 2 {
		t.Errorf("conditions after recovery: %v", conds)
	}
}

func TestPlacementsAndAPIPropagationsReadyForKubectlWait(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scheduled metav1.Condition
		ready     metav1.ConditionStatus
		want      status.Status
	}{
		{"clusters chosen", cond(flotillav1.PlacementScheduled, yes, flotillav1.ReasonClustersSelected), yes, status.CurrentStatus},
		// kstatus reads Ready False as waiting: for a cluster to match.
		{"none matches", cond(flotillav1.PlacementScheduled, no, flotillav1.ReasonNoClustersMatch), no, status.InProgressStatus},
		{"a selector does not parse", cond(flotillav1.PlacementScheduled, no, flotillav1.ReasonInvalidSelector), no, status.FailedStatus},
	} {
		p := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team", Generation: 1},
			Status: flotillav1.PlacementStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{tc.scheduled}}}
		Placement(&p.Status.Conditions, 1)
		if c := meta.FindStatusCondition(p.Status.Conditions, Ready); c == nil || c.Status != tc.ready {
			t.Errorf("Placement %s: Ready %v, want %s", tc.name, c, tc.ready)
		}
		if got := kstatusOf(t, p); got != tc.want {
			t.Errorf("Placement %s: kstatus %s, want %s", tc.name, got, tc.want)
		}
	}

	for _, tc := range []struct {
		name              string
		accepted, serving metav1.Condition
		ready             metav1.ConditionStatus
		readyReason       string
		want              status.Status
	}{
		{"serving", cond(flotillav1.APIPropagationAccepted, yes, flotillav1.ReasonAccepted), cond(flotillav1.APIPropagationServing, yes, flotillav1.ReasonServing), yes, flotillav1.ReasonServing, status.CurrentStatus},
		{"delivering CRDs", cond(flotillav1.APIPropagationAccepted, yes, flotillav1.ReasonAccepted), cond(flotillav1.APIPropagationServing, no, flotillav1.ReasonProgressing), no, flotillav1.ReasonProgressing, status.InProgressStatus},
		{"a compile fails", cond(flotillav1.APIPropagationAccepted, yes, flotillav1.ReasonAccepted), cond(flotillav1.APIPropagationServing, no, flotillav1.ReasonCompileFailed), no, flotillav1.ReasonCompileFailed, status.FailedStatus},
		{"not accepted", cond(flotillav1.APIPropagationAccepted, no, flotillav1.ReasonPlacementNotFound), cond(flotillav1.APIPropagationServing, no, flotillav1.ReasonNotAccepted), no, flotillav1.ReasonPlacementNotFound, status.FailedStatus},
	} {
		p := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "apis", Generation: 1},
			Status: flotillav1.APIPropagationStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{tc.accepted, tc.serving}}}
		APIPropagation(&p.Status.Conditions, 1)
		if c := meta.FindStatusCondition(p.Status.Conditions, Ready); c == nil || c.Status != tc.ready || c.Reason != tc.readyReason {
			t.Errorf("APIPropagation %s: Ready %v, want %s %s", tc.name, c, tc.ready, tc.readyReason)
		}
		if got := kstatusOf(t, p); got != tc.want {
			t.Errorf("APIPropagation %s: kstatus %s, want %s", tc.name, got, tc.want)
		}
	}
}

// Clusters and Delivery records need nothing more: kstatus reads a Cluster through its
// observedGeneration, and kubectl wait its Ready; a record is Current.
func TestClustersAndRecordsAsTheyAre(t *testing.T) {
	c := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Generation: 2},
		Status: flotillav1.ClusterStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{cond(flotillav1.ClusterReady, yes, flotillav1.ReasonProbed)}}}
	if got := kstatusOf(t, c); got != status.InProgressStatus {
		t.Errorf("a Cluster whose new generation is not observed: %s", got)
	}
	c.Status.ObservedGeneration = 2
	if got := kstatusOf(t, c); got != status.CurrentStatus {
		t.Errorf("a probed Cluster: %s", got)
	}
	d := &flotillav1.Delivery{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "flotilla-system", Generation: 1}}
	if got := kstatusOf(t, d); got != status.CurrentStatus {
		t.Errorf("a Delivery record: %s", got)
	}
}
