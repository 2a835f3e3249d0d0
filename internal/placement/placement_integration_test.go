package placement_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/placement"
)

func TestPlacementFollowsTheFleet(t *testing.T) {
	ctx, c := startPlacementController(t)
	for name, region := range map[string]string{"a": "eu", "b": "eu", "c": "us"} {
		cl := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"region": region}},
			Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{Namespace: "x", Name: name}}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	eu := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "default"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}}
	typo := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "typo", Namespace: "default"},
		Spec: flotillav1.PlacementSpec{ClusterNames: []string{"eu-1"}}}
	for _, p := range []*flotillav1.Placement{eu, typo} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(name string, want []string, reason string) *flotillav1.Placement {
		t.Helper()
		got := &flotillav1.Placement{}
		fleettest.Eventually(t, 20*time.Second, fmt.Sprintf("placement %s chooses %v", name, want), func() error {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, got); err != nil {
				return err
			}
			var names []string
			for _, d := range got.Status.Decisions {
				names = append(names, d.ClusterName)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, flotillav1.PlacementScheduled)
			if !slices.Equal(names, want) || cond == nil || cond.Reason != reason || got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("decisions %v, condition %+v", names, cond)
			}
			return nil
		})
		return got
	}
	expect("eu", []string{"a", "b"}, flotillav1.ReasonClustersSelected)
	expect("typo", nil, flotillav1.ReasonNoClustersMatch)

	t.Run("relabelling a cluster moves it", func(t *testing.T) {
		patchCluster(t, c, "c", func(cl *flotillav1.Cluster) { cl.Labels["region"] = "eu" })
		expect("eu", []string{"a", "b", "c"}, flotillav1.ReasonClustersSelected)
	})

	t.Run("a cordon keeps what a cluster has", func(t *testing.T) {
		patchCluster(t, c, "a", func(cl *flotillav1.Cluster) { cl.Spec.Unschedulable = true })
		// A Placement scheduled from a cache that does not show the cordon yet would choose a
		// and keep it (a cordon keeps what a cluster has): probes, each scheduled once and
		// deleted, show when the controller sees it.
		var probe *flotillav1.Placement
		probes := 0
		fleettest.Eventually(t, 20*time.Second, "the controller sees a cordoned", func() error {
			if probe == nil {
				probes++
				probe = &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", probes), Namespace: "default"}, Spec: eu.Spec}
				if err := c.Create(ctx, probe); err != nil {
					probe = nil
					return err
				}
				return fmt.Errorf("probe %s created", probe.Name)
			}
			got := &flotillav1.Placement{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(probe), got); err != nil {
				return err
			}
			if got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("probe %s not scheduled yet", probe.Name)
			}
			if err := c.Delete(ctx, probe); err != nil {
				return err
			}
			name := probe.Name
			probe = nil
			for _, d := range got.Status.Decisions {
				if d.ClusterName == "a" {
					return fmt.Errorf("probe %s chose a", name)
				}
			}
			return nil
		})
		fresh := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: "default"}, Spec: eu.Spec}
		if err := c.Create(ctx, fresh); err != nil {
			t.Fatal(err)
		}
		expect("fresh", []string{"b", "c"}, flotillav1.ReasonClustersSelected)
		expect("eu", []string{"a", "b", "c"}, flotillav1.ReasonClustersSelected)
	})

	t.Run("a NoExecute taint moves placements away", func(t *testing.T) {
		patchCluster(t, c, "b", func(cl *flotillav1.Cluster) {
			cl.Spec.Taints = []flotillav1.ClusterTaint{{Key: "decommission", Effect: flotillav1.TaintEffectNoExecute}}
		})
		expect("eu", []string{"a", "c"}, flotillav1.ReasonClustersSelected)
	})

	t.Run("clusterCount picks that many, and keeps them", func(t *testing.T) {
		one := int32(1)
		pick := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "pick", Namespace: "default"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, ClusterCount: &one}}
		if err := c.Create(ctx, pick); err != nil {
			t.Fatal(err)
		}
		// a is cordoned and b drained: c is the only eligible cluster.
		expect("pick", []string{"c"}, flotillav1.ReasonClustersSelected)
		// b back: the cluster chosen stays chosen.
		patchCluster(t, c, "b", func(cl *flotillav1.Cluster) { cl.Spec.Taints = nil })
		expect("eu", []string{"a", "b", "c"}, flotillav1.ReasonClustersSelected) // b is eligible again
		fleettest.Consistently(t, 2*time.Second, "the cluster chosen stays chosen", func() error {
			got := &flotillav1.Placement{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(pick), got); err != nil {
				return err
			}
			if len(got.Status.Decisions) != 1 || got.Status.Decisions[0].ClusterName != "c" {
				return fmt.Errorf("decisions %v", got.Status.Decisions)
			}
			return nil
		})
		three := int32(3)
		if err := c.Get(ctx, client.ObjectKeyFromObject(pick), pick); err != nil {
			t.Fatal(err)
		}
		pick.Spec.ClusterCount = &three
		if err := c.Update(ctx, pick); err != nil {
			t.Fatal(err)
		}
		expect("pick", []string{"b", "c"}, flotillav1.ReasonClusterCountNotMet)
		patchCluster(t, c, "b", func(cl *flotillav1.Cluster) {
			cl.Spec.Taints = []flotillav1.ClusterTaint{{Key: "decommission", Effect: flotillav1.TaintEffectNoExecute}}
		})
		expect("pick", []string{"c"}, flotillav1.ReasonClusterCountNotMet)
		expect("eu", []string{"a", "c"}, flotillav1.ReasonClustersSelected)
	})

	t.Run("nothing is written when nothing changes", func(t *testing.T) {
		before := expect("typo", nil, flotillav1.ReasonNoClustersMatch)
		// Both changes re-schedule every placement; only "eu" has anything new to record.
		patchCluster(t, c, "a", func(cl *flotillav1.Cluster) { cl.Labels["owner"] = "team-x" })
		patchCluster(t, c, "c", func(cl *flotillav1.Cluster) { cl.Labels["region"] = "us" })
		expect("eu", []string{"a"}, flotillav1.ReasonClustersSelected)
		after := expect("typo", nil, flotillav1.ReasonNoClustersMatch)
		if after.ResourceVersion != before.ResourceVersion {
			t.Fatalf("an unchanged placement was written (resourceVersion %s → %s)", before.ResourceVersion, after.ResourceVersion)
		}
	})
}

func patchCluster(t *testing.T, c client.Client, name string, mutate func(*flotillav1.Cluster)) {
	t.Helper()
	cl := &flotillav1.Cluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, cl); err != nil {
		t.Fatal(err)
	}
	before := cl.DeepCopy()
	mutate(cl)
	if err := c.Patch(context.Background(), cl, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// TestAPIValidation checks that the CRDs' validation rules compile and reject bad input with
// their messages.
func TestAPIValidation(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub())
	ctx := context.Background()
	cfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		obj  client.Object
		want string
	}{
		{&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "default"}}, "set clusterNames, clusterSelector, or both"},
		{&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "tol", Namespace: "default"}, Spec: flotillav1.PlacementSpec{
			ClusterNames: []string{"a"}, Tolerations: []flotillav1.Toleration{{Key: "k", Operator: flotillav1.TolerationOpExists, Value: "v"}}}},
			"value must be empty when operator is Exists"},
		{&flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "no-ns"}, Spec: flotillav1.PropagationSpec{
			PlacementRef:      flotillav1.PlacementRef{Name: "p"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}}},
			"placementRef.namespace is required"},
		{&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "nothing", Namespace: "default"}, Spec: flotillav1.PropagationSpec{
			PlacementRef: flotillav1.PlacementRef{Name: "p"}}}, "select at least one resource or manifest source"},
		{&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: "default"}, Spec: flotillav1.PropagationSpec{
			PlacementRef: flotillav1.PlacementRef{Name: "p"}, ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				Name: "x", LabelSelector: &metav1.LabelSelector{}}}}}, "set name or labelSelector, not both"},
		{withOverride("two-changes", flotillav1.Override{Name: "r", MergePatch: &apiextensionsv1.JSON{Raw: []byte(`{}`)},
			CEL: &flotillav1.CELOverride{Path: "/spec/replicas", Expression: "1"}}), "set exactly one of jsonPatch, mergePatch and cel"},
		{withOverride("bad-pointer", flotillav1.Override{Name: "r", CEL: &flotillav1.CELOverride{Path: "spec.replicas", Expression: "1"}}), "spec.overrides[0].cel.path"},
		{withOverride("bad-op", flotillav1.Override{Name: "r", JSONPatch: []flotillav1.JSONPatchOperation{{Op: "rename", Path: "/a"}}}), "spec.overrides[0].jsonPatch[0].op"},
		{withOverride("bad-name", flotillav1.Override{Name: "Not A Name", MergePatch: &apiextensionsv1.JSON{Raw: []byte(`{}`)}}), "spec.overrides[0].name"},
		{&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "bad-ignore", Namespace: "default"}, Spec: flotillav1.PropagationSpec{
			PlacementRef: flotillav1.PlacementRef{Name: "p"}, ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
			Strategy: flotillav1.PropagationStrategy{IgnoreFields: []flotillav1.IgnoreFields{{Kind: "Deployment", Paths: []string{"/spec/a~2"}}}}}},
			"spec.strategy.ignoreFields[0].paths[0]"},
		{&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "bad-tier", Namespace: "default"}, Spec: flotillav1.PlacementSpec{
			ClusterNames: []string{"a"}, Tiers: []flotillav1.ClusterTier{{Name: "On Prem", ClusterNames: []string{"a"}}}}}, "spec.tiers[0].name"},
		{&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "bad-order", Namespace: "default"}, Spec: flotillav1.PlacementSpec{
			ClusterNames: []string{"a"}, Moves: &flotillav1.MovePolicy{Order: "Sideways"}}}, "spec.moves.order"},
		{&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "bad-deadline", Namespace: "default"}, Spec: flotillav1.PlacementSpec{
			ClusterNames: []string{"a"}, Moves: &flotillav1.MovePolicy{ProgressDeadline: &metav1.Duration{Duration: -time.Minute}}}}, "progressDeadline must be positive"},
		{withRollout("rest-stage", flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "rest", ClusterNames: []string{"a"}}}}),
			"rest is the name of the implicit last stage"},
		{withRollout("no-room", flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "one", MaxUnavailable: ptrTo(intstr.FromInt32(0))}}}),
			"must be at least 1"},
		{withRollout("bad-soak", flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "one", Soak: &metav1.Duration{Duration: -time.Second}}}}),
			"soak must not be negative"},
		{withRollout("bad-approval", flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "one", Approval: "Maybe"}}}),
			"spec.rollout.stages[0].approval"},
		{withRollout("twice", flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "one"}, {Name: "one"}}}), "Duplicate value"},
		{withRollout("bad-rollout-deadline", flotillav1.RolloutPolicy{ProgressDeadline: &metav1.Duration{Duration: -time.Minute}}),
			"progressDeadline must be positive"},
		{withRollout("bad-failures", flotillav1.RolloutPolicy{MaxFailures: ptrTo(intstr.FromString("150%"))}), "spec.rollout.maxFailures"},
		{withRollout("bad-on-failure", flotillav1.RolloutPolicy{OnFailure: "Retry"}), "spec.rollout.onFailure"},
	} {
		err := c.Create(ctx, tt.obj)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("create %T %s: error %v, want one containing %q", tt.obj, tt.obj.GetName(), err, tt.want)
		}
	}
	ok := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "ok", Namespace: "default"}, Spec: flotillav1.PlacementSpec{
		ClusterNames: []string{"a"}, Tolerations: []flotillav1.Toleration{{Key: "k", Operator: flotillav1.TolerationOpExists}}}}
	if err := c.Create(ctx, ok); err != nil {
		t.Fatalf("a valid Placement was rejected: %v", err)
	}
}

func withRollout(name string, r flotillav1.RolloutPolicy) *flotillav1.Placement {
	return &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"}, Rollout: &r}}
}

func ptrTo[T any](v T) *T { return &v }

func withOverride(name string, o flotillav1.Override) *flotillav1.Propagation {
	return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: flotillav1.PropagationSpec{
		PlacementRef: flotillav1.PlacementRef{Name: "p"}, ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
		Overrides: []flotillav1.Override{o}}}
}

// TestStandInsUnderClusterCount: with clusterCount 2, a chosen cluster that stays not Ready
// beyond clusterUnhealthyAfter is FailedOver and the third cluster stands in for it (its
// decision says which it replaces); Ready again, it is Returning with the stand-in kept; after
// failbackAfter it is Active and the stand-in is let go.
func TestStandInsUnderClusterCount(t *testing.T) {
	ctx, c := startPlacementController(t)
	setReady := func(name string, status metav1.ConditionStatus) {
		t.Helper()
		cl := &flotillav1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			t.Fatal(err)
		}
		before := cl.DeepCopy()
		meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: flotillav1.ClusterReady, Status: status, Reason: "Probed", Message: "test"})
		if err := c.Status().Patch(ctx, cl, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"x", "y", "z"} {
		cl := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{Namespace: "x", Name: name}}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		setReady(name, metav1.ConditionTrue)
	}
	two := int32(2)
	pick := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "two", Namespace: "default"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, ClusterCount: &two,
			Moves: &flotillav1.MovePolicy{ClusterUnhealthyAfter: &metav1.Duration{Duration: time.Second},
				FailbackAfter: &metav1.Duration{Duration: 3 * time.Second}}}}
	if err := c.Create(ctx, pick); err != nil {
		t.Fatal(err)
	}
	// decisions waits until the decisions read "name:state>replaces" as want says, in order.
	decisions := func(what string, want func(got []string) bool) []string {
		t.Helper()
		var got []string
		fleettest.Eventually(t, 20*time.Second, what, func() error {
			p := &flotillav1.Placement{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(pick), p); err != nil {
				return err
			}
			got = got[:0]
			for _, d := range p.Status.Decisions {
				got = append(got, d.ClusterName+":"+string(d.State)+">"+d.Replaces)
			}
			if !want(got) {
				return fmt.Errorf("decisions %v", got)
			}
			return nil
		})
		return got
	}
	first := decisions("two clusters chosen", func(got []string) bool { return len(got) == 2 })
	away, kept := strings.Split(first[0], ":")[0], strings.Split(first[1], ":")[0]
	spare := "xyz"
	spare = strings.NewReplacer(away, "", kept, "").Replace(spare)

	setReady(away, metav1.ConditionFalse)
	decisions(spare+" stands in for "+away, func(got []string) bool {
		return slices.Contains(got, away+":FailedOver>") && slices.Contains(got, kept+":>") && slices.Contains(got, spare+":>"+away)
	})
	setReady(away, metav1.ConditionTrue)
	decisions(away+" Returning, its stand-in kept", func(got []string) bool {
		return slices.Contains(got, away+":Returning>") && slices.Contains(got, spare+":>"+away)
	})
	decisions(away+" Active again, the stand-in let go", func(got []string) bool {
		return slices.Equal(got, first)
	})
}

// startPlacementController starts a hub with Flotilla's CRDs and the placement controller, and
// returns a context ending with the test and a client of the hub.
func startPlacementController(t *testing.T) (context.Context, client.Client) {
	t.Helper()
	fleet := fleettest.Start(t, fleettest.Hub())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	skip := true // each test starts its own manager in this process
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: install.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&placement.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	c, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c
}
