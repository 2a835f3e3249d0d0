package propagation_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

const wait = 30 * time.Second

// env is a hub running the controller and API-only spokes joined to it, with audit logs.
type env struct {
	t          *testing.T // the test the controller lives as long as
	fleet      *localfleet.Fleet
	hub        client.Client
	spokes     map[string]client.Client
	controller *hubtest.Controller
}

func auditedSpoke(name string) localfleet.PlaneSpec {
	s := fleettest.APIOnlySpoke(name)
	s.AuditLog = true
	return s
}

// standardSpokes are the planes of a test that asks for some of them and tunes none: it gets
// all three, and the hub joins those it asks for, so that most tests of the package hand one
// fleet on (fleettest.Main) instead of starting their own shape.
var standardSpokes = []string{"spoke-a", "spoke-b", "spoke-c"}

func startEnv(t *testing.T, spokes map[string]string, tune ...func(*localfleet.PlaneSpec)) *env {
	t.Helper()
	specs := []localfleet.PlaneSpec{{Name: "hub", Role: localfleet.RoleHub, AuditLog: true}}
	planes := slices.Collect(maps.Keys(spokes))
	if len(tune) == 0 && !slices.ContainsFunc(planes, func(n string) bool { return !slices.Contains(standardSpokes, n) }) {
		planes = standardSpokes
	}
	for _, name := range planes {
		s := auditedSpoke(name)
		for _, f := range tune {
			f(&s)
		}
		specs = append(specs, s)
	}
	fleet := fleettest.Start(t, specs...)
	ctx := context.Background()
	e := &env{t: t, fleet: fleet, spokes: map[string]client.Client{}, hub: hubtest.Install(t, fleet)}
	e.controller = hubtest.Run(t, fleet)
	var err error
	for name, region := range spokes {
		p := fleet.Plane(name)
		if err := membership.Join(ctx, e.hub, membership.JoinOptions{Name: name, Spoke: p.RESTConfig(), Labels: map[string]string{"region": region},
			APIGroups: []string{"example.com"}}); err != nil {
			t.Fatal(err)
		}
		if e.spokes[name], err = client.New(p.RESTConfig(), client.Options{Scheme: install.Scheme()}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.hub.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}

// onSpoke waits until the spoke has the object (and check passes) or, with absent, lacks it.
func (e *env) onSpoke(t *testing.T, spoke string, obj client.Object, absent bool, check func() error) {
	t.Helper()
	what := fmt.Sprintf("%T %s/%s on %s", obj, obj.GetNamespace(), obj.GetName(), spoke)
	if absent {
		what += " absent"
	}
	fleettest.Eventually(t, wait, what, func() error {
		err := e.spokes[spoke].Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if absent {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		}
		if err != nil {
			return err
		}
		if check != nil {
			return check()
		}
		return nil
	})
}

func (e *env) applied(t *testing.T, name string, wantReason string, wantClusters int32) *flotillav1.Propagation {
	t.Helper()
	p := &flotillav1.Propagation{}
	fleettest.Eventually(t, wait, fmt.Sprintf("propagation %s %s on %d clusters", name, wantReason, wantClusters), func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, p); err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied)
		if c == nil || c.Reason != wantReason || p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("condition %+v", c)
		}
		if wantReason == flotillav1.ReasonApplied && p.Status.AppliedClusters != wantClusters {
			return fmt.Errorf("appliedClusters %d", p.Status.AppliedClusters)
		}
		return nil
	})
	return p
}

// flotillaWrites counts mutating requests Flotilla made to a plane.
func (e *env) flotillaWrites(t *testing.T, plane string) int {
	return e.countWrites(t, plane, func(localfleet.AuditEvent) bool { return true })
}

// lastWrite returns when Flotilla last made this request to a plane (zero if never).
func (e *env) lastWrite(t *testing.T, plane, verb, resource, name string) time.Time {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, ev := range events {
		if ev.Verb == verb && ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == name && strings.HasPrefix(ev.UserAgent, "flotilla") {
			last = ev.StageTimestamp
		}
	}
	return last
}

// writesSince lists Flotilla's mutating requests to a plane since a time, for failure messages.
func (e *env) writesSince(t *testing.T, plane string, since time.Time) string {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && !ev.StageTimestamp.Before(since) {
			w := ev.Verb + " " + ev.RequestURI
			if body := string(ev.RequestObject); body != "" {
				w += " " + body[:min(len(body), 400)]
			}
			writes = append(writes, w)
		}
	}
	return strings.Join(writes, "; ")
}

// countWrites counts Flotilla's mutating requests to a plane that match.
func (e *env) countWrites(t *testing.T, plane string, match func(localfleet.AuditEvent) bool) int {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && match(ev) {
			n++
		}
	}
	return n
}

// updatePropagation changes a Propagation, retrying when the controller wrote in between.
func (e *env) updatePropagation(t *testing.T, name string, mutate func(*flotillav1.Propagation)) {
	t.Helper()
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}
	e.updateHub(t, p, func() { mutate(p) })
}

// updateHub reads the hub object named by obj into it, changes it with mutate and writes it,
// again from a fresh read when a controller wrote it in between.
func (e *env) updateHub(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// Decoding merges into maps already set: read into an empty object.
		v := reflect.ValueOf(obj).Elem()
		v.Set(reflect.Zero(v.Type()))
		if err := e.hub.Get(context.Background(), key, obj); err != nil {
			return err
		}
		mutate()
		return e.hub.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func configMap(name string, labels map[string]string, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", Labels: labels}, Data: map[string]string{"v": data}}
}

func deployment(name string) *appsv1.Deployment {
	replicas := int32(2)
	l := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}},
	}
}

func TestMain(m *testing.M) {
	fleettest.SetControllerLogger()
	os.Exit(fleettest.Main(m))
}

func TestPropagation(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}})
	web := map[string]string{"app": "web"}
	e.create(t, configMap("cfg", web, "one"))
	e.create(t, deployment("web"))
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{
			ResourceSelectors: []flotillav1.ResourceSelector{
				{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: web}},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			},
			PlacementRef: flotillav1.PlacementRef{Name: "eu"},
		}})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "team"}}
	t.Run("delivers to the chosen cluster only, creating the namespace", func(t *testing.T) {
		e.onSpoke(t, "spoke-a", cm, false, func() error {
			owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
			if cm.Labels[flotillav1.LabelOwner] != owner.LabelValue() || cm.Annotations[flotillav1.AnnotationOwner] != owner.String() {
				return fmt.Errorf("markers missing: %v %v", cm.Labels, cm.Annotations)
			}
			if _, ok := cm.Labels[flotillav1.LabelManagedBy]; ok {
				return fmt.Errorf("the managed-by label of earlier releases written: %v", cm.Labels)
			}
			return nil
		})
		e.onSpoke(t, "spoke-a", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, false, nil)
		p := e.applied(t, "web", flotillav1.ReasonApplied, 1)
		if p.Status.SelectedObjects != 2 || p.Status.TargetClusters != 1 || len(p.Status.ClusterResults) != 1 || p.Status.ClusterResults[0].Applied != 2 {
			t.Fatalf("status = %+v", p.Status)
		}
		if err := e.spokes["spoke-b"].Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Fatalf("delivered to a cluster the placement does not choose: %v", err)
		}
	})

	t.Run("a hub edit reaches the spoke", func(t *testing.T) {
		hubCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: "team"}}
		e.updateHub(t, hubCM, func() { hubCM.Data["v"] = "two" })
		e.onSpoke(t, "spoke-a", cm, false, func() error {
			if cm.Data["v"] != "two" {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
		e.applied(t, "web", flotillav1.ReasonApplied, 1)
	})

	t.Run("steady state and a controller restart make no writes", func(t *testing.T) {
		spokeBefore, hubBefore := e.flotillaWrites(t, "spoke-a"), e.flotillaWrites(t, "hub")
		hubStart := time.Now()
		e.controller.Stop()
		e.controller = hubtest.Run(e.t, e.fleet)
		// The restarted controller re-reads everything; give it time to reconcile every object
		// and prove that it did by a status change elsewhere: a new propagation that converges.
		e.create(t, configMap("marker", map[string]string{"app": "marker"}, "x"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "marker"}},
				PlacementRef: flotillav1.PlacementRef{Name: "eu"}}})
		e.applied(t, "marker", flotillav1.ReasonApplied, 1)
		e.applied(t, "web", flotillav1.ReasonApplied, 1)
		spokeAfter := e.flotillaWrites(t, "spoke-a")
		// The marker costs one apply on the spoke. On the hub it costs its finalizer, its
		// status, its revision, its Delivery record, what the record says the cluster must run
		// (spec.work), the record's result and the new count of placements on its cluster;
		// nothing else may be written.
		if got := spokeAfter - spokeBefore; got != 1 {
			t.Errorf("Flotilla made %d writes to the spoke across a restart, want exactly 1 (the new marker)", got)
		}
		// A probe of a spoke may find something changed there at any time (under load, say):
		// the inventory records it with a new lastProbeTime. Such a write is an observation of
		// the spoke, not something the restart caused; it is logged, not counted.
		probeFinding := func(ev localfleet.AuditEvent) bool {
			return !ev.StageTimestamp.Before(hubStart) && ev.ObjectRef.Resource == "clusters" &&
				strings.Contains(string(ev.RequestObject), `"lastProbeTime"`)
		}
		findings := e.countWrites(t, "hub", probeFinding)
		if findings > 0 {
			t.Logf("%d probe findings recorded across the restart: %s", findings, e.writesSince(t, "hub", hubStart))
		}
		notMarker := func(ev localfleet.AuditEvent) bool {
			return !ev.StageTimestamp.Before(hubStart) && ev.ObjectRef.Resource != "events" && !probeFinding(ev) &&
				ev.ObjectRef.Name != "marker" && !strings.HasPrefix(ev.ObjectRef.Name, "propagation.marker.") &&
				!(ev.Verb == "create" && ev.ObjectRef.Resource == "controllerrevisions") &&
				!(ev.ObjectRef.Resource == "clusters" && ev.ObjectRef.Name == "spoke-a")
		}
		if got := e.countWrites(t, "hub", func(ev localfleet.AuditEvent) bool {
			return !ev.StageTimestamp.Before(hubStart) && ev.ObjectRef.Resource == "clusters" && !probeFinding(ev)
		}); got > 1 {
			t.Errorf("%d writes of Clusters across a restart, want at most one (spoke-a's count of placements, for the marker): %s",
				got, e.writesSince(t, "hub", hubStart))
		}
		if got := e.countWrites(t, "hub", notMarker); got != 0 {
			t.Errorf("Flotilla made %d writes to the hub across a restart other than for the new marker: %s",
				got, e.writesSince(t, "hub", hubStart))
		}
		if got := e.flotillaWrites(t, "hub") - hubBefore - findings; got > 8 {
			t.Errorf("Flotilla made %d writes to the hub across a restart, want at most 8: %s", got, e.writesSince(t, "hub", hubStart))
		}
	})

	t.Run("an object the spoke already has is not taken over", func(t *testing.T) {
		theirs := configMap("taken", nil, "theirs")
		if err := e.spokes["spoke-a"].Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		e.create(t, configMap("taken", web, "ours"))
		p := e.applied(t, "web", flotillav1.ReasonConflict, 0)
		if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied); !strings.Contains(c.Message, "configmap team/taken") {
			t.Errorf("conflict message does not name the object: %s", c.Message)
		}
		got := &corev1.ConfigMap{}
		if err := e.spokes["spoke-a"].Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil || got.Data["v"] != "theirs" {
			t.Fatalf("the spoke's own object was changed: %v %v", got.Data, err)
		}
		if err := e.hub.Delete(ctx, configMap("taken", nil, "")); err != nil {
			t.Fatal(err)
		}
		e.applied(t, "web", flotillav1.ReasonApplied, 1)
		if err := e.spokes["spoke-a"].Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil {
			t.Fatalf("pruning removed an object Flotilla does not own: %v", err)
		}
	})

	t.Run("a selector typo holds objects; removal from the hub prunes", func(t *testing.T) {
		var good flotillav1.PropagationSpec
		e.updatePropagation(t, "web", func(p *flotillav1.Propagation) {
			good = *p.Spec.DeepCopy()
			p.Spec.ResourceSelectors = []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wbe"}}}}
		})
		e.applied(t, "web", flotillav1.ReasonNothingSelected, 0)
		e.onSpoke(t, "spoke-a", cm, false, nil)
		e.onSpoke(t, "spoke-a", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, false, nil)

		e.updatePropagation(t, "web", func(p *flotillav1.Propagation) { p.Spec = good })
		e.applied(t, "web", flotillav1.ReasonApplied, 1)
		if err := e.hub.Delete(ctx, configMap("cfg", nil, "")); err != nil {
			t.Fatal(err)
		}
		e.onSpoke(t, "spoke-a", cm, true, nil)
		e.onSpoke(t, "spoke-a", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, false, nil)
	})

	t.Run("a move keeps the old copy until the new one is Ready", func(t *testing.T) {
		relabel := func(name, region string) {
			c := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
			e.updateHub(t, c, func() { c.Labels["region"] = region })
		}
		relabel("spoke-b", "eu")
		relabel("spoke-a", "us")
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
		e.onSpoke(t, "spoke-b", dep, false, nil)
		// These spokes run no controllers: the new copy is not Ready, so the old one stays and
		// the move says why.
		e.condition(t, "web", flotillav1.PropagationApplied, metav1.ConditionFalse, "until they are Ready on every chosen cluster")
		since := time.Now()
		fleettest.Consistently(t, 2*time.Second, "the old copy stays while the new one is not Ready", func() error {
			if n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" && ev.StageTimestamp.After(since) }); n != 0 {
				return fmt.Errorf("%d deletes on spoke-a", n)
			}
			return nil
		})
		// What a Deployment controller would write once the pods are available.
		ready := time.Now()
		fleettest.MarkAvailable(t, e.spokes["spoke-b"], client.ObjectKeyFromObject(dep))
		e.onSpoke(t, "spoke-a", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, true, nil)
		e.applied(t, "web", flotillav1.ReasonApplied, 1)
		if removed := e.lastWrite(t, "spoke-a", "delete", "deployments", "web"); !removed.After(ready) {
			t.Fatalf("web removed from spoke-a at %s, before it was Ready on spoke-b (%s)", removed, ready)
		}
	})

	// spoke-a left the placement above: its series went with its idle worker. spoke-b delivers.
	t.Run("deliveries and spoke writes are exported as metrics", func(t *testing.T) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "cluster" && l.GetValue() == "spoke-b" {
						found[f.GetName()] = true
					}
				}
			}
		}
		for _, name := range []string{"flotilla_spoke_writes_total", "flotilla_deliveries_total", "flotilla_delivery_duration_seconds"} {
			if !found[name] {
				t.Errorf("metric %s has no series for spoke-b", name)
			}
		}
	})

	t.Run("deleting a Propagation removes its objects, or orphans them", func(t *testing.T) {
		e.create(t, configMap("kept", map[string]string{"app": "kept"}, "x"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "orphaning", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "kept"}},
				PlacementRef: flotillav1.PlacementRef{Name: "eu"}, Strategy: flotillav1.PropagationStrategy{Deletion: flotillav1.DeletionOrphan}}})
		kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "team"}}
		e.onSpoke(t, "spoke-b", kept, false, nil)
		for _, name := range []string{"orphaning", "web"} {
			if err := e.hub.Delete(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}); err != nil {
				t.Fatal(err)
			}
		}
		e.onSpoke(t, "spoke-b", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, true, nil)
		fleettest.Eventually(t, wait, "propagations gone from the hub", func() error {
			var list flotillav1.PropagationList
			if err := e.hub.List(ctx, &list, client.InNamespace("team")); err != nil {
				return err
			}
			for _, p := range list.Items {
				if p.Name == "web" || p.Name == "orphaning" {
					return fmt.Errorf("%s still there", p.Name)
				}
			}
			return nil
		})
		if err := e.spokes["spoke-b"].Get(ctx, client.ObjectKeyFromObject(kept), kept); err != nil {
			t.Fatalf("Orphan did not leave the object: %v", err)
		}
	})
}
