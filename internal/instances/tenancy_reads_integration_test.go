package instances_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A spoke user holding one namespace (fleettest.SpokeUser, `edit` in team) creates an instance of
// a fleet API whose children's namespace comes from the instance, pointed at payments, where
// Flotilla delivered a ConfigMap and a Secret for an administrator (so the spoke cache holds
// them). The instance's status would copy their data. Under the default tenancy nothing is read
// there: the instance shows ERROR saying why, nothing is written in payments (audit log), and
// neither value appears anywhere on the spoke or the hub, nor in the controllers' log.
func TestInstanceReadsNothingOutsideItsNamespace(t *testing.T) {
	const cmCanary, secretCanary = "canary-cm-p4ym3nts-l3dg3r", "canary-s3cr3t-p4ym3nts-k3y"
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.serve(t, "spoke-1", readRGD(t, "testdata/peek-rgd.yaml"))
	e.namespace(t, "spoke-1", "team")
	e.namespace(t, "spoke-1", "payments")
	spoke, plane := e.spokes["spoke-1"], e.fleet.Plane("spoke-1")

	// An administrator's delivery into payments.
	admin := render.Owner{Kind: "ClusterPropagation", Name: "payments-ledger"}
	var objects []*unstructured.Unstructured
	for _, obj := range []client.Object{
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "ledger"}, Data: map[string]string{"account": cmCanary}},
		&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "ledger"}, Data: map[string][]byte{"password": []byte(secretCanary)}},
	} {
		raw, err := toUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		rendered, err := render.Render(raw, admin)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, rendered)
	}
	render.Sort(objects)
	e.deliverer.Submit(deliver.Job{Owner: admin, Cluster: "spoke-1", Objects: objects, Revision: render.Revision(objects)})
	fleettest.Eventually(t, wait, "the administrator's ledger delivered into payments", func() error {
		if r, ok := e.deliverer.Result(admin, "spoke-1"); !ok || !r.Complete {
			return fmt.Errorf("result %+v", r)
		}
		return nil
	})
	inPayments := func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Namespace == "payments" }
	delivered := len(e.writes(t, "spoke-1", inPayments))

	// The attacker: edit in team, and the right to create the API's instances there.
	user := e.spokeUser(t, "spoke-1", "team", compiled)
	if err := user.Get(ctx, client.ObjectKey{Namespace: "payments", Name: "ledger"}, &corev1.ConfigMap{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the spoke user reads payments' ConfigMap itself (%v): the test proves nothing", err)
	}

	if err := user.Create(ctx, newInstance(compiled, "team", "peek", map[string]any{"target": "payments", "name": "ledger"})); err != nil {
		t.Fatal(err)
	}
	var seen *unstructured.Unstructured
	fleettest.Eventually(t, wait, "the instance in ERROR", func() error {
		u := newInstance(compiled, "team", "peek", nil)
		if err := user.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		seen = u
		return stateIs(u, kro.StateError)
	})
	if msg := fmt.Sprint(condition(seen, "ResourcesReady")["message"]); !strings.Contains(msg,
		`ConfigMap in namespace "payments" not allowed: an instance may read and write only its own namespace "team"`) {
		t.Errorf("ResourcesReady message %q", msg)
	}
	if w := e.writes(t, "spoke-1", inPayments); len(w) != delivered {
		t.Errorf("writes in payments besides the administrator's delivery: %s", describe(w[delivered:]))
	}

	secretB64 := base64.StdEncoding.EncodeToString([]byte(secretCanary))
	status, err := json.Marshal(seen.Object)
	if err != nil {
		t.Fatal(err)
	}
	events := &corev1.EventList{}
	if err := spoke.List(ctx, events, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	seenByUser, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, canary := range []string{cmCanary, secretCanary, secretB64} {
		for what, text := range map[string]string{"the instance": string(status), "team's Events": string(seenByUser), "the log": logs.String()} {
			if strings.Contains(text, canary) {
				t.Errorf("%s shows payments' data %q: %s", what, canary, text)
			}
		}
		fleettest.NoCanary(t, ctx, e.fleet.Hub().RESTConfig(), canary, logs.String())
	}
	// The ConfigMap canary is in payments' ConfigMap itself; the Secret's, anywhere but Secrets.
	for _, canary := range []string{secretCanary, secretB64} {
		fleettest.NoCanary(t, ctx, plane.RESTConfig(), canary)
	}
}

func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(raw)
}
