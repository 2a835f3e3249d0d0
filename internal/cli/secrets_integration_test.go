package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// secretCanary is planted in Secret data on the hub; it must show up nowhere but in Secrets.
const secretCanary = "canary-b0und4ry-f1071lla"

// TestSecretDataStaysInside delivers Secrets holding a canary and drives every path that used to
// copy Secret data out of Secrets: a revision kept and pinned, a spoke refusing a Secret with a
// message that quotes it, override rules reading it, and `flotilla status`, `plan` and `diff`.
// The canary (and its base64 form) must then be in nothing listable on the hub or the spoke
// but Secrets, in no line the controller logged and in no CLI output; a `view` user's list of
// ControllerRevisions has the revisions and not the data; a pin whose Secret changed on the hub
// fails, writing nothing, instead of delivering the new value.
func TestSecretDataStaysInside(t *testing.T) {
	logs := &capturedLogs // set in TestMain
	spokeSpec := fleettest.APIOnlySpoke("spoke-a")
	spokeSpec.AuditLog = true
	fleet := fleettest.Start(t, fleettest.Hub(), spokeSpec)
	ctx := context.Background()
	hub := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokeCfg := fleet.Plane("spoke-a").RESTConfig()
	if err := membership.Join(ctx, hub, membership.JoinOptions{Name: "spoke-a", Spoke: spokeCfg, Labels: map[string]string{"region": "eu"}}); err != nil {
		t.Fatal(err)
	}
	spoke, err := client.New(spokeCfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	create := func(t *testing.T, obj client.Object) {
		t.Helper()
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	secret := func(name string, labels map[string]string, data map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: labels}, StringData: data}
	}
	propagation := func(name string, spec flotillav1.PropagationSpec) *flotillav1.Propagation {
		spec.PlacementRef = flotillav1.PlacementRef{Name: "eu"}
		return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}, Spec: spec}
	}
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	fleettest.Grant(t, ctx, hub, "team", fleettest.Viewer, "view")
	create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "eu"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}})

	// db: selected Secrets, kept in revisions and pinned.
	dbLabels := map[string]string{"app": "db"}
	create(t, secret("db", dbLabels, map[string]string{"password": secretCanary}))
	create(t, propagation("db", flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{
		{APIVersion: "v1", Kind: "Secret", LabelSelector: &metav1.LabelSelector{MatchLabels: dbLabels}}}}))
	// broken: a manifest Secret the spoke refuses, quoting the value it cannot decode.
	create(t, secret("broken-bundle", nil, map[string]string{"broken.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\n" +
		"stringData:\n  token:\n    nested: " + secretCanary + "\n"}))
	create(t, propagation("broken", flotillav1.PropagationSpec{Manifests: []flotillav1.ManifestSource{{Kind: "Secret", Name: "broken-bundle"}}}))
	// probe: override rules that would read the Secret (CEL's timestamp() quotes its input).
	create(t, secret("probe-bundle", nil, map[string]string{"probe.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: probe\n" +
		"stringData:\n  token: " + secretCanary + "\n"}))
	readsToken := &flotillav1.CELOverride{Path: "/metadata/labels/leak", Expression: `string(timestamp(object.stringData.token))`}
	create(t, propagation("probe", flotillav1.PropagationSpec{Manifests: []flotillav1.ManifestSource{{Kind: "Secret", Name: "probe-bundle"}},
		Overrides: []flotillav1.Override{
			{Name: "any-kind", CEL: readsToken},
			{Name: "secrets", Target: &flotillav1.OverrideTarget{Kind: "Secret"}, CEL: readsToken},
		}}))

	condition := func(t *testing.T, name, reason, message string) *flotillav1.Propagation {
		t.Helper()
		p := &flotillav1.Propagation{}
		fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("propagation %s %s %q", name, reason, message), func() error {
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, p); err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied)
			if c == nil || c.Reason != reason || !strings.Contains(c.Message, message) || p.Status.ObservedGeneration != p.Generation {
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		return p
	}
	onSpoke := func(t *testing.T, name string) string {
		t.Helper()
		s := &corev1.Secret{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, s); err != nil {
			t.Fatalf("Secret %s on the spoke: %v", name, err)
		}
		return string(s.Data["password"])
	}
	secretWrites := func(t *testing.T, name string, since time.Time) int {
		t.Helper()
		events, err := fleet.Plane("spoke-a").AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range events {
			if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.ObjectRef.Resource == "secrets" &&
				ev.ObjectRef.Name == name && !ev.RequestReceivedTimestamp.Before(since) {
				n++
			}
		}
		return n
	}
	pin := func(t *testing.T, revision string) {
		t.Helper()
		p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "db"}}
		pins := fmt.Sprintf(`{"spec":{"revisionPins":[{"cluster":"spoke-a","revision":%q}]}}`, revision)
		if err := hub.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(pins))); err != nil {
			t.Fatal(err)
		}
	}

	condition(t, "db", flotillav1.ReasonApplied, "")
	first := keptRevisions(t, hub, render.Owner{Kind: "Propagation", Namespace: "team", Name: "db"}, 1)[0]

	t.Run("a pinned revision delivers its Secret, read again from the hub", func(t *testing.T) {
		pin(t, first.Name)
		pinned := time.Now()
		// A second Secret makes a new latest revision; the pinned cluster stays on the first.
		create(t, secret("db-extra", dbLabels, map[string]string{"password": "not-a-canary"}))
		keptRevisions(t, hub, render.Owner{Kind: "Propagation", Namespace: "team", Name: "db"}, 2)
		fleettest.Eventually(t, 30*time.Second, "spoke-a reported at the pinned revision", func() error {
			p := condition(t, "db", flotillav1.ReasonApplied, "")
			for _, r := range p.Status.ClusterResults {
				if r.Cluster == "spoke-a" && r.Revision == first.Labels["flotilla.dev/revision"] && r.Failed == 0 && r.Applied == 1 {
					return nil
				}
			}
			return fmt.Errorf("results %+v", p.Status.ClusterResults)
		})
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "db-extra"}, &corev1.Secret{}); err == nil {
			t.Error("db-extra reached the cluster pinned to a revision without it")
		}
		if v := onSpoke(t, "db"); v != secretCanary {
			t.Errorf("the pinned Secret holds %q on the spoke, want its value", v)
		}
		if n := secretWrites(t, "db", pinned); n != 0 {
			t.Errorf("%d writes to Secret db since the pin: the revision must deliver exactly what it delivered", n)
		}
		// Drift there is corrected back to the revision's Secret, its value read from the hub.
		live := &corev1.Secret{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "db"}, live); err != nil {
			t.Fatal(err)
		}
		live.Data["password"] = []byte("edited-on-the-spoke")
		if err := spoke.Update(ctx, live); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 30*time.Second, "the pinned Secret corrected on the spoke", func() error {
			if v := onSpoke(t, "db"); v != secretCanary {
				return fmt.Errorf("password %q", v)
			}
			return nil
		})
	})

	t.Run("a pinned Secret changed on the hub fails, writing nothing", func(t *testing.T) {
		changed := time.Now()
		db := &corev1.Secret{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "db"}, db); err != nil {
			t.Fatal(err)
		}
		db.Data["password"] = []byte(secretCanary + "-rotated")
		if err := hub.Update(ctx, db); err != nil {
			t.Fatal(err)
		}
		condition(t, "db", flotillav1.ReasonApplyFailed, "now holds other data than this revision delivered")
		if v := onSpoke(t, "db"); v != secretCanary {
			t.Errorf("the pinned cluster got %q, want what it had", v)
		}
		if n := secretWrites(t, "db", changed); n != 0 {
			t.Errorf("%d writes to Secret db after its source changed", n)
		}
	})

	t.Run("a view user lists the revisions, not the data", func(t *testing.T) {
		viewer, err := client.New(fleettest.As(fleet.Hub().RESTConfig(), fleettest.Viewer), client.Options{Scheme: install.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		var list appsv1.ControllerRevisionList
		if err := viewer.List(ctx, &list, client.InNamespace("team")); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) < 2 {
			t.Fatalf("the viewer lists %d revisions, want the db ones at least: the check proves nothing", len(list.Items))
		}
		if err := viewer.Get(ctx, client.ObjectKey{Namespace: "team", Name: "db"}, &corev1.Secret{}); err == nil {
			t.Fatal("the viewer reads Secrets: the check proves nothing")
		}
		for _, cr := range list.Items {
			for _, v := range canaries() {
				if bytes.Contains(cr.Data.Raw, []byte(v)) {
					t.Errorf("revision %s holds Secret data", cr.Name)
				}
			}
		}
	})

	t.Run("no Secret value in status, Events, records, logs or CLI output", func(t *testing.T) {
		broken := condition(t, "broken", flotillav1.ReasonApplyFailed, "its message is withheld")
		probe := condition(t, "probe", flotillav1.ReasonApplyFailed, `override "secrets": targets Secrets`)
		var outputs []string
		for _, args := range [][]string{
			{"status", "propagation/db"}, {"status", "propagation/broken"}, {"status", "propagation/probe"},
			{"plan", "propagation/db"}, {"plan", "propagation/broken"}, {"plan", "propagation/probe"}, {"diff", "propagation/db"},
		} {
			outputs = append(outputs, runCLI(t, fleet, append(args, "-n", "team")...))
		}
		joined := strings.Join(outputs, "\n")
		for _, want := range []string{"its message is withheld", "the Secret's keys: token", "targets Secrets", "now holds other data"} {
			if !strings.Contains(joined, want) {
				t.Errorf("the CLI output does not say %q; the check proves little:\n%s", want, joined)
			}
		}
		for _, msg := range []string{broken.Status.Conditions[0].Message, probe.Status.Conditions[0].Message} {
			t.Logf("reported: %s", msg)
		}
		log := logs.String()
		if !strings.Contains(log, "withheld") {
			t.Error("the captured log misses the refusal; the check proves nothing")
		}
		for _, v := range canaries() {
			fleettest.NoCanary(t, ctx, fleet.Hub().RESTConfig(), v, append(outputs, log)...)
			fleettest.NoCanary(t, ctx, spokeCfg, v)
		}
	})
}

// keptRevisions waits until the hub keeps n revisions of owner, and returns them.
func keptRevisions(t *testing.T, hub client.Client, owner render.Owner, n int) []appsv1.ControllerRevision {
	t.Helper()
	var list appsv1.ControllerRevisionList
	fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("%d revisions of %s", n, owner), func() error {
		if err := hub.List(context.Background(), &list, client.InNamespace(owner.Namespace), client.MatchingLabels{flotillav1.LabelOwner: owner.LabelValue()}); err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("%d revisions", len(list.Items))
		}
		return nil
	})
	return list.Items
}

// canaries are the forms the canary takes: as written, and as a Secret's data holds it.
func canaries() []string {
	return []string{secretCanary, base64.StdEncoding.EncodeToString([]byte(secretCanary))}
}

// runCLI runs the flotilla command line against the fleet's hub and returns what it printed.
func runCLI(t *testing.T, fleet *localfleet.Fleet, args ...string) string {
	t.Helper()
	cmd := NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--hub-kubeconfig", fleet.Hub().KubeconfigPath()))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	return out.String()
}
