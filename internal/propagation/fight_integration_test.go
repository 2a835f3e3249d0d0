package propagation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// fighterManager is the field manager of the test's fighting controller.
const fighterManager = "test-fighter"

// fighter plays a controller on a spoke that wants a ConfigMap's data.v to hold its own value:
// it watches the object and writes its value back, as its own field manager, every time it
// sees another one.
type fighter struct {
	cancel   context.CancelFunc
	done     chan struct{}
	rewrites atomic.Int64
}

// watchAndRecheck hands each ConfigMap of w to seen, and calls recheck every 500 ms, until w
// ends or ctx does.
func watchAndRecheck(ctx context.Context, w watch.Interface, seen func(*corev1.ConfigMap), recheck func()) {
	defer w.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
				seen(cm)
			}
		case <-tick.C:
			recheck()
		case <-ctx.Done():
			return
		}
	}
}

func startFighter(t *testing.T, cfg *rest.Config, name, value string) *fighter {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fighter{cancel: cancel, done: make(chan struct{})}
	cms := cs.CoreV1().ConfigMaps("team")
	rewrite := func(cm *corev1.ConfigMap) {
		if cm.Data["v"] == value {
			return
		}
		cm.Data["v"] = value
		// A conflict means someone wrote in between: the watch brings that write next.
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: fighterManager}); err == nil {
			f.rewrites.Add(1)
		}
	}
	go func() {
		defer close(f.done)
		retry := time.NewTicker(100 * time.Millisecond) // paces a watch that could not start
		defer retry.Stop()
		for {
			list, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
			if err == nil && len(list.Items) == 1 {
				rewrite(&list.Items[0])
				if w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: list.ResourceVersion}); err == nil {
					watchAndRecheck(ctx, w, func(cm *corev1.ConfigMap) { rewrite(cm) }, func() {
						// A rewrite that lost a race (a conflict) waits for the next event;
						// should none come, a read now and then finds the object as it is.
						if cm, err := cms.Get(ctx, name, metav1.GetOptions{}); err == nil {
							rewrite(cm)
						}
					})
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-retry.C:
			}
		}
	}()
	t.Cleanup(f.stop)
	return f
}

// stop stops the fighter and waits until it is gone.
func (f *fighter) stop() {
	f.cancel()
	<-f.done
}

// configMapWrites counts Flotilla's writes to one ConfigMap on a plane since a time, apart
// from dry runs (which store nothing), and the dry runs.
func (e *env) configMapWrites(t *testing.T, plane, name string, since time.Time) (writes, dryRuns int) {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if !ev.Mutating() || !strings.HasPrefix(ev.UserAgent, "flotilla") || ev.ObjectRef.Resource != "configmaps" ||
			ev.ObjectRef.Name != name || ev.StageTimestamp.Before(since) {
			continue
		}
		if strings.Contains(ev.RequestURI, "dryRun=") {
			dryRuns++
		} else {
			writes++
		}
	}
	return writes, dryRuns
}

// hubEvents returns the Events on a hub object with a reason.
func (e *env) hubEvents(t *testing.T, objName, reason string) []corev1.Event {
	t.Helper()
	var events corev1.EventList
	if err := e.hub.List(context.Background(), &events, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == objName && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// admitAs makes the spoke's admission set data.v of every ConfigMap whose name starts with
// prefix to value, on every create and update, the way a mutating webhook would: a
// MutatingAdmissionPolicy, which the API server runs itself.
func (e *env) admitAs(t *testing.T, spoke, prefix, value string) {
	t.Helper()
	ctx := context.Background()
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "set-v"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "named", Expression: fmt.Sprintf("object.metadata.name.startsWith(%q)", prefix)}},
			Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: fmt.Sprintf(`[JSONPatch{op: "add", path: "/data/v", value: %q}]`, value)}}},
			FailurePolicy:      &fail,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		}}
	if err := e.spokes[spoke].Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "set-v"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "set-v"}}
	if err := e.spokes[spoke].Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	// The API server loads policies asynchronously: wait until a dry run shows it at work.
	fleettest.Eventually(t, wait, "the admission policy in force", func() error {
		probe := configMap(prefix+"-probe", nil, "probe")
		probe.Namespace = "default"
		if err := e.spokes[spoke].Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if probe.Data["v"] != value {
			return fmt.Errorf("data.v %q", probe.Data["v"])
		}
		return nil
	})
}

// TestSpokeRewrites covers what happens when something on a spoke changes a field Flotilla
// sets: admission changing it on the way in is not drift at all; a controller changing it back
// after every correction is a fight, corrected with backoff and reported once.
func TestSpokeRewrites(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})

	t.Run("a value admission sets on the spoke is what the object should hold: no drift, no writes", func(t *testing.T) {
		e.admitAs(t, "spoke-a", "admitted", "set-by-admission")
		e.create(t, configMap("admitted-c", nil, "hub"))
		e.create(t, configMap("admitted-r", nil, "hub"))
		e.create(t, propagationOf("admitted-c", flotillav1.PropagationStrategy{}, "ConfigMap/admitted-c"))
		e.create(t, propagationOf("admitted-r", flotillav1.PropagationStrategy{Drift: flotillav1.DriftReport}, "ConfigMap/admitted-r"))
		e.applied(t, "admitted-c", flotillav1.ReasonApplied, 1)
		e.applied(t, "admitted-r", flotillav1.ReasonApplied, 1)
		start := time.Now() // delivered: every write from now on would be a "correction"
		if v, err := e.valueOnSpoke("spoke-a", "admitted-c"); err != nil || v != "set-by-admission" {
			t.Fatalf("admission did not set the value: %q (%v)", v, err)
		}
		// Another manager touches both objects now and then, as spoke controllers do. Each
		// touch shows Flotilla the object again; for longer than Flotilla trusts its own
		// recent writes over what the cache shows (10 s), so that only the comparison with what
		// the server stores keeps it from "correcting" the value admission set.
		stop := make(chan struct{})
		touched := make(chan error, 1)
		go func() {
			pace := time.NewTicker(500 * time.Millisecond)
			defer pace.Stop()
			for i := 0; ; i++ {
				for _, name := range []string{"admitted-c", "admitted-r"} {
					cm := &corev1.ConfigMap{}
					err := e.spokes["spoke-a"].Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, cm)
					if err == nil {
						cm.Labels["touched"] = fmt.Sprint(i)
						err = e.spokes["spoke-a"].Update(ctx, cm, client.FieldOwner("test-labeller"))
					}
					if err != nil && !apierrors.IsConflict(err) {
						touched <- err
						return
					}
				}
				select {
				case <-stop:
					touched <- nil
					return
				case <-pace.C:
				}
			}
		}()
		fleettest.Consistently(t, 15*time.Second, "no write after the delivery, no drift reported", func() error {
			for _, name := range []string{"admitted-c", "admitted-r"} {
				if n, _ := e.configMapWrites(t, "spoke-a", name, start); n != 0 {
					return fmt.Errorf("%d writes to %s", n, name)
				}
			}
			p := &flotillav1.Propagation{}
			if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "admitted-r"}, p); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationDrifted); p.Status.Drifted != 0 || c == nil || c.Status != metav1.ConditionFalse {
				return fmt.Errorf("drift reported: %d, %+v", p.Status.Drifted, c)
			}
			return nil
		})
		close(stop)
		if err := <-touched; err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"admitted-c", "admitted-r"} {
			_, dryRuns := e.configMapWrites(t, "spoke-a", name, start)
			if dryRuns > 1 {
				t.Errorf("%d dry runs of %s, want at most 1 (its server form is remembered)", dryRuns, name)
			}
		}
		if evs := e.hubEvents(t, "admitted-c", "DriftCorrected"); len(evs) != 0 {
			t.Errorf("a value set by admission was corrected: %s", evs[0].Message)
		}
	})

	t.Run("a controller that undoes every correction is fought with backoff and reported once", func(t *testing.T) {
		e.create(t, configMap("fought", nil, "hub"))
		e.create(t, propagationOf("fought", flotillav1.PropagationStrategy{}, "ConfigMap/fought"))
		e.applied(t, "fought", flotillav1.ReasonApplied, 1)

		const fightFor = 20 * time.Second
		start := time.Now()
		f := startFighter(t, e.fleet.Plane("spoke-a").RESTConfig(), "fought", "fighter")
		want := "spoke-a: configmap team/fought is changed back after every correction, at /data/v by " + fighterManager
		e.condition(t, "fought", flotillav1.PropagationFighting, metav1.ConditionTrue, want)
		fleettest.Consistently(t, fightFor-time.Since(start), "the fight reported, with few writes", func() error {
			p := &flotillav1.Propagation{}
			if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "fought"}, p); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationFighting); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("Fighting condition %+v", c)
			}
			if r := p.Status.ClusterResults; len(r) != 1 || r[0].Fighting != 1 || len(r[0].FightingObjects) != 1 ||
				!strings.HasPrefix(r[0].FightingObjects[0].Manager, fighterManager) || r[0].FightingObjects[0].Object != "configmap team/fought" {
				return fmt.Errorf("cluster results %+v", r)
			}
			if n, _ := e.configMapWrites(t, "spoke-a", "fought", start); n > 6 {
				return fmt.Errorf("%d writes", n)
			}
			return nil
		})
		f.stop()
		writes, dryRuns := e.configMapWrites(t, "spoke-a", "fought", start)
		t.Logf("over %s the fighter rewrote the field %d times; Flotilla wrote %d times (and dry-ran %d)",
			time.Since(start).Round(time.Second), f.rewrites.Load(), writes, dryRuns)
		if writes < 2 {
			t.Errorf("Flotilla wrote %d times: it stopped correcting instead of backing off", writes)
		}
		if dryRuns > 1 {
			t.Errorf("%d dry runs, want at most 1", dryRuns)
		}
		// Events are recorded asynchronously: wait for the first, then there must be no other.
		var fights []corev1.Event
		fleettest.Eventually(t, wait, "a Fighting Event", func() error {
			if fights = e.hubEvents(t, "fought", flotillav1.ReasonFighting); len(fights) == 0 {
				return errors.New("none yet")
			}
			return nil
		})
		if len(fights) != 1 || fights[0].Count > 1 || !strings.Contains(fights[0].Message, fighterManager) {
			t.Errorf("want exactly one Fighting Event naming %s, got %+v", fighterManager, fights)
		}

		// The hub object changes: Flotilla applies it at once, and the fight is over.
		hubCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fought", Namespace: "team"}}
		e.updateHub(t, hubCM, func() { hubCM.Data["v"] = "hub-2" })
		e.onSpoke(t, "spoke-a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fought", Namespace: "team"}}, false, func() error {
			if v, _ := e.valueOnSpoke("spoke-a", "fought"); v != "hub-2" {
				return fmt.Errorf("value %q", v)
			}
			return nil
		})
		p := e.condition(t, "fought", flotillav1.PropagationFighting, metav1.ConditionFalse, "")
		if r := p.Status.ClusterResults; len(r) != 1 || r[0].Fighting != 0 || len(r[0].FightingObjects) != 0 {
			t.Errorf("the fight is still reported: %+v", r)
		}
		if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("Applied condition %+v", c)
		}
	})
}
