package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// notesRGD serves Note (kro.run/v1alpha1): each makes a ConfigMap of its text, and shows the
// text the ConfigMap holds in its status.
const notesRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: notes
spec:
  schema:
    apiVersion: v1alpha1
    kind: Note
    spec:
      text: string
    status:
      stored: ${config.data.text}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-note
      data:
        text: ${schema.spec.text}
`

// gadgetsRGD needs Gadget.example.com, which the pull spoke does not serve.
const gadgetsRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: gadget-sets
spec:
  schema:
    apiVersion: v1alpha1
    kind: GadgetSet
    spec:
      size: integer
  resources:
  - id: gadget
    template:
      apiVersion: example.com/v1
      kind: Gadget
      metadata:
        name: ${schema.metadata.name}
      spec:
        size: ${schema.spec.size}
`

// TestPullClusterServesFleetAPIs: an APIPropagation whose Placement chooses a pull cluster.
// The hub cannot read that spoke; its agent compiles the RGD revision the work names against
// the spoke's own schemas, so the CRD is Established there, an instance created there is
// expanded there (its child created, its status written), and the hub's status shows the
// cluster Serving from what the agent reported. An RGD that does not compile on the spoke
// shows there as CompileFailed (SchemaNotFound), as on a push cluster; nothing is deleted on
// the spoke by the agent (audit log).
func TestPullClusterServesFleetAPIs(t *testing.T) {
	ctx := context.Background()
	pullSpec := fleettest.APIOnlySpoke("edge")
	pullSpec.AuditLog = true
	fleet := fleettest.Start(t, fleettest.Hub(), pullSpec)
	hubc := hubtest.Install(t, fleet)
	urls := make(chan string, 1)
	hubtest.Run(t, fleet, func(o *hub.Options) {
		o.WorkAddr, o.WorkReady = "127.0.0.1:0", func(url string) { urls <- url }
	})
	create(t, hubc, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull}})
	if _, err := membership.GrantAgent(ctx, hubc, "edge"); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeToken(t, fleet, tokenFile)
	var base string
	select {
	case base = <-urls:
	case <-time.After(wait):
		t.Fatal("the work endpoint never listened")
	}
	agentCtx, stopAgent := context.WithCancel(ctrl.LoggerInto(ctx, ctrl.Log))
	done := make(chan error, 1)
	go func() {
		done <- agent.Run(agentCtx, agent.Options{Cluster: "edge", WorkURL: base, TokenFile: tokenFile,
			Spoke: fleet.Plane("edge").RESTConfig(), PollInterval: 200 * time.Millisecond})
	}()
	t.Cleanup(func() {
		stopAgent()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})

	notes, gadgets := rgdOf(t, notesRGD), rgdOf(t, gadgetsRGD)
	start := time.Now()
	create(t, hubc, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: membership.Namespace},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	create(t, hubc, notes)
	create(t, hubc, gadgets)
	create(t, hubc, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: flotillav1.APIPropagationSpec{
		ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{notes.Name, gadgets.Name}},
		PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace},
	}})

	// The CRD is Established on the pull spoke, compiled from the revision the hub keeps.
	edge := spokeClient(t, fleet, "edge")
	fleettest.Eventually(t, wait, "the Note CRD Established on the pull spoke", func() error {
		crd := &extv1.CustomResourceDefinition{}
		if err := edge.Get(ctx, client.ObjectKey{Name: kro.CRDName(notes)}, crd); err != nil {
			return err
		}
		kept, err := (&revisions.Store{Metadata: hubc}).List(ctx, render.Owner{Kind: fleetapi.OwnerKind, Name: notes.Name})
		if err != nil {
			return err
		}
		if got := crd.Annotations[flotillav1.AnnotationAPIRevision]; len(kept) != 1 || got != kept[0].Name {
			return fmt.Errorf("compiled from revision %q; the hub keeps %v", got, kept)
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Established: %+v", crd.Status.Conditions)
	})
	t.Logf("the CRD was Established on the pull spoke %s after the APIPropagation", time.Since(start).Round(time.Millisecond))

	// The hub's status shows the pull cluster Serving notes, and gadget-sets CompileFailed for
	// want of Gadget there, from what the agent reported.
	fleettest.Eventually(t, wait, "the APIPropagation shows edge Serving notes and failing gadget-sets", func() error {
		p := &flotillav1.APIPropagation{}
		if err := hubc.Get(ctx, client.ObjectKey{Name: "platform"}, p); err != nil {
			return err
		}
		var rows []string
		ok := 0
		for _, r := range p.Status.ClusterResults {
			rows = append(rows, fmt.Sprintf("%s/%s %s %s %s", r.Cluster, r.API, r.Phase, r.Reason, r.Message))
			switch {
			case r.Cluster == "edge" && r.API == notes.Name && r.Phase == flotillav1.APIServing && r.ServedGeneration == 1:
				ok++
			case r.Cluster == "edge" && r.API == gadgets.Name && r.Phase == flotillav1.APICompileFailed && r.Reason == flotillav1.ReasonSchemaNotFound:
				ok++
			}
		}
		if ok != 2 {
			return fmt.Errorf("rows %q", rows)
		}
		return nil
	})
	t.Logf("the hub showed the pull cluster Serving %s after the APIPropagation", time.Since(start).Round(time.Millisecond))

	// An instance created on the pull spoke is expanded there: its child, its status.
	note := &unstructured.Unstructured{}
	note.SetGroupVersionKind(kro.InstanceKind(notes))
	note.SetNamespace("default")
	note.SetName("hello")
	note.Object["spec"] = map[string]any{"text": "hi"}
	start = time.Now()
	if err := edge.Create(ctx, note); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the Note's ConfigMap and status on the pull spoke", func() error {
		cm := &corev1.ConfigMap{}
		if err := edge.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-note"}, cm); err != nil {
			return err
		}
		if cm.Data["text"] != "hi" {
			return fmt.Errorf("data %v", cm.Data)
		}
		got := note.DeepCopy()
		if err := edge.Get(ctx, client.ObjectKeyFromObject(note), got); err != nil {
			return err
		}
		state, _, _ := unstructured.NestedString(got.Object, "status", "state")
		stored, _, _ := unstructured.NestedString(got.Object, "status", "stored")
		if state != "ACTIVE" || stored != "hi" {
			return fmt.Errorf("status state %q stored %q", state, stored)
		}
		return nil
	})
	t.Logf("the instance was expanded on the pull spoke in %s", time.Since(start).Round(time.Millisecond))

	// The spoke never got the RGD that does not compile there, and the agent deleted nothing.
	crd := &extv1.CustomResourceDefinition{}
	if err := edge.Get(ctx, client.ObjectKey{Name: kro.CRDName(gadgets)}, crd); err == nil {
		t.Errorf("the pull spoke has the CRD of %s, which does not compile there", gadgets.Name)
	}
	noDeletes(t, fleet.Plane("edge"))
}

func rgdOf(t *testing.T, manifest string) *kro.ResourceGraphDefinition {
	t.Helper()
	rgd := &kro.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(manifest), rgd); err != nil {
		t.Fatal(err)
	}
	return rgd
}
