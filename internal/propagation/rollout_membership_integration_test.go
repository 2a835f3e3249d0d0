package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestRolloutSurvivesMembershipChanges: mid-rollout (the canary done, the second stage waiting
// for its approval) one cluster's API server is frozen (SIGSTOP) and another cluster is labelled
// into the Placement. The joining cluster gets the revision its stage has reached (the old one
// while the stage waits, the new one once it starts); the frozen one neither fails the rollout
// nor holds it up past the progress deadline; the rollout is never Halted; when the API server
// resumes the frozen cluster gets the new revision and the rollout completes. The spokes' audit
// logs show nothing deleted anywhere, and the frozen cluster written after it resumed.
func TestRolloutSurvivesMembershipChanges(t *testing.T) {
	const deadline = 15 * time.Second // ConfigMaps are Ready at once: ample on a busy machine
	e := startEnv(t, map[string]string{"a": "eu", "b": "eu", "c": "eu", "d": "later"})
	ctx := context.Background()
	begun := time.Now()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
			Rollout: &flotillav1.RolloutPolicy{ProgressDeadline: &metav1.Duration{Duration: deadline}, Stages: []flotillav1.RolloutStage{
				{Name: "canary", ClusterNames: []string{"a"}},
				{Name: "fleet", ClusterSelector: &metav1.LabelSelector{}, Approval: flotillav1.ApprovalRequired},
			}}}})
	e.create(t, configMap("settings", nil, "blue"))
	e.create(t, settingsPropagation())
	e.values(t, map[string]string{"a": "blue", "b": "blue", "c": "blue"})
	phases := e.watchRolloutPhases(t, "settings")

	e.setValue(t, "settings", "green")
	e.values(t, map[string]string{"a": "green"})
	status := e.rolloutPhase(t, flotillav1.RolloutWaitingForApproval)

	// Mid-rollout: b's API server freezes, and d is labelled into the Placement.
	pid := e.fleet.Plane("b").PIDs()["kube-apiserver"]
	if pid == 0 {
		t.Fatal("no kube-apiserver pid for b")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(resume) // before the fleet stops: a frozen API server would not stop
	frozen := time.Now()
	fleettest.Eventually(t, wait, "the hub sees b not Ready", func() error {
		cl := &flotillav1.Cluster{}
		if err := e.hub.Get(ctx, client.ObjectKey{Name: "b"}, cl); err != nil {
			return err
		}
		if meta.IsStatusConditionTrue(cl.Status.Conditions, flotillav1.ClusterReady) {
			return fmt.Errorf("b is Ready")
		}
		return nil
	})
	d := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
	e.updateHub(t, d, func() { d.Labels["region"] = "eu" })
	// Its stage waits for approval: d gets the revision most clusters run.
	e.values(t, map[string]string{"d": "blue"})

	approved := time.Now()
	e.annotate(t, flotillav1.AnnotationApprove, "fleet@"+status.Revision)
	e.values(t, map[string]string{"c": "green", "d": "green"})
	fleettest.Eventually(t, wait, "the rollout names b as unreachable", func() error {
		s := e.rollout(t)
		if s.Phase != flotillav1.RolloutProgressing || !strings.Contains(s.Message, "b (") {
			return fmt.Errorf("rollout %+v", s)
		}
		return nil
	})
	// Past b's progress deadline (had it been let through at the approval) it still fails nothing.
	if left := time.Until(approved.Add(deadline + 2*time.Second)); left > 0 {
		fleettest.Consistently(t, left, "the rollout goes on past the deadline", func() error {
			if s := e.rollout(t); s.Phase != flotillav1.RolloutProgressing {
				return fmt.Errorf("rollout %+v", s)
			}
			return nil
		})
	}

	resume()
	back := time.Now()
	e.values(t, map[string]string{"a": "green", "b": "green", "c": "green", "d": "green"})
	e.rolloutPhase(t, flotillav1.RolloutComplete)

	seen := phases()
	for _, p := range seen {
		if p == flotillav1.RolloutHalted {
			t.Errorf("the rollout was Halted at one point: phases %v", seen)
		}
	}
	if got := fmt.Sprint(seen); !strings.Contains(got, "WaitingForApproval Progressing") || len(seen) == 0 || seen[len(seen)-1] != flotillav1.RolloutComplete {
		t.Errorf("phases %v, want WaitingForApproval, then Progressing, at last Complete", seen)
	}
	if got := e.lastConfigMapWrite(t, "b", "settings", frozen); got.Before(back) {
		t.Errorf("b last written at %s, before its API server resumed at %s", got.Format(time.StampMicro), back.Format(time.StampMicro))
	}
	for _, spoke := range []string{"a", "b", "c", "d"} {
		if n := e.countWrites(t, spoke, func(ev localfleet.AuditEvent) bool {
			return ev.Verb == "delete" && ev.StageTimestamp.After(begun)
		}); n != 0 {
			t.Errorf("%d deletes on %s: %s", n, spoke, e.writesSince(t, spoke, begun))
		}
	}
}

// rollout reads the rollout status of Propagation team/name settings.
func (e *env) rollout(t *testing.T) flotillav1.RolloutStatus {
	t.Helper()
	p := &flotillav1.Propagation{}
	if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil || p.Status.Rollout == nil {
		return flotillav1.RolloutStatus{Message: fmt.Sprint(err)}
	}
	return *p.Status.Rollout
}

// watchRolloutPhases watches Propagation team/name and records each rollout phase its status
// passes through, until the returned stop, which returns them.
func (e *env) watchRolloutPhases(t *testing.T, name string) (stop func() []flotillav1.RolloutPhase) {
	t.Helper()
	c, err := client.NewWithWatch(e.fleet.Hub().RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.Watch(ctx, &flotillav1.PropagationList{}, client.InNamespace("team"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		phases []flotillav1.RolloutPhase
		ended  bool
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*flotillav1.Propagation)
			if !ok || ev.Type == watch.Error || p.Name != name || p.Status.Rollout == nil {
				continue
			}
			mu.Lock()
			if n := len(phases); n == 0 || phases[n-1] != p.Status.Rollout.Phase {
				phases = append(phases, p.Status.Rollout.Phase)
			}
			mu.Unlock()
		}
		mu.Lock()
		ended = ctx.Err() == nil
		mu.Unlock()
	}()
	stopped := false
	stopIt := func() []flotillav1.RolloutPhase {
		if !stopped {
			stopped = true
			cancel()
			w.Stop()
			<-done
		}
		mu.Lock()
		defer mu.Unlock()
		if ended {
			t.Errorf("the watch of %s ended before the test stopped it: phases seen %v", name, phases)
		}
		return append([]flotillav1.RolloutPhase(nil), phases...)
	}
	t.Cleanup(func() { stopIt() })
	return stopIt
}
