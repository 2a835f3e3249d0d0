package fleetapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// TestRGDRevisionsRollOut: a changed RGD reaches its clusters stage by stage, as the
// APIPropagation's Placement rolls revisions out: the canary first; the others keep serving
// the revision they serve (no write to their CRD) until the next stage is approved on the RGD.
func TestRGDRevisionsRollOut(t *testing.T) {
	spokes := []string{"spoke-a", "spoke-b", "spoke-c"}
	e := startEnv(t, spokes...)
	ctx := context.Background()
	for _, s := range spokes {
		e.join(t, s)
	}
	webapp := &kro.ResourceGraphDefinition{}
	kroFile(t, "examples/kubernetes/webapp/rg.yaml", webapp)
	rollout := &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
		{Name: "canary", ClusterNames: []string{"spoke-a"}, Soak: &metav1.Duration{}},
		{Name: "fleet", ClusterSelector: &metav1.LabelSelector{}, Soak: &metav1.Duration{}, Approval: flotillav1.ApprovalRequired},
	}}
	for _, obj := range []client.Object{
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: membership.Namespace},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, Rollout: rollout}},
		webapp,
		&flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{webapp.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace},
		}},
	} {
		if err := e.hub.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
	crdName := kro.CRDName(webapp)
	// The first revision goes everywhere: no cluster serves another to be held at.
	for _, s := range spokes {
		e.served(t, s, crdName, webapp, 1)
	}
	revisionOn := func(spoke string) string {
		crd := &extv1.CustomResourceDefinition{}
		if err := e.spokes[spoke].Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			t.Fatal(err)
		}
		return crd.Annotations[flotillav1.AnnotationAPIRevision]
	}
	first := revisionOn("spoke-a")
	e.status(t, "platform", "serving on 3 clusters", serving(3))

	since := time.Now()
	changed := e.updateRGD(t, webapp.Name, addField(t, "team", `string | default="platform"`))
	e.served(t, "spoke-a", crdName, changed, changed.Generation)
	second := revisionOn("spoke-a")
	if second == first {
		t.Fatalf("the canary serves revision %s, as before the change", second)
	}
	e.status(t, "platform", "spoke-b and spoke-c held by the rollout", func(p *flotillav1.APIPropagation) error {
		for _, s := range []string{"spoke-b", "spoke-c"} {
			r := resultOf(p, s, webapp.Name)
			if r == nil || r.Phase != flotillav1.APIServing || r.ServedGeneration != 1 || !strings.Contains(r.Message, "held by the rollout at revision "+first) {
				return fmt.Errorf("%s: %+v", s, r)
			}
			// Its row says where it stands in the rollout: waiting for the fleet stage's approval.
			if w := r.Rollout; w == nil || w.Stage != "fleet" || w.State != flotillav1.RolloutClusterWaitingForApproval || w.Revision != first || w.Since.IsZero() {
				return fmt.Errorf("%s's rollout row: %+v", s, w)
			}
		}
		if r := resultOf(p, "spoke-a", webapp.Name); r == nil || r.Rollout == nil || r.Rollout.State != flotillav1.RolloutClusterSucceeded || r.Rollout.Revision != second {
			return fmt.Errorf("the canary: %+v", r)
		}
		return nil
	})
	fleettest.Eventually(t, wait, "a RolloutWaitingForApproval Event on the RGD", func() error {
		var events corev1.EventList
		if err := e.hub.List(ctx, &events); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == webapp.Name && ev.Reason == "Rollout"+string(flotillav1.RolloutWaitingForApproval) &&
				strings.Contains(ev.Message, second) {
				return nil
			}
		}
		return fmt.Errorf("none among %d Events", len(events.Items))
	})
	// `flotilla plan rgd/NAME` shows the same holds.
	d, err := fleetapi.PreviewRGD(ctx, e.hub, webapp.Name, func(_ context.Context, c string) (client.Client, *rest.Config, error) {
		return e.spokes[c], e.fleet.Plane(c).RESTConfig(), nil
	}, hub.RecordOwners())
	if err != nil {
		t.Fatal(err)
	}
	for _, cd := range d.Clusters {
		want := first
		if cd.Cluster == "spoke-a" {
			want = ""
		}
		if cd.Pinned != want || cd.Err != nil {
			t.Errorf("plan of %s: pinned %q (%v), want %q", cd.Cluster, cd.Pinned, cd.Err, want)
		}
	}
	if len(d.Clusters) != 3 || len(d.Holds) != 1 || !strings.Contains(d.Holds[0], string(flotillav1.RolloutWaitingForApproval)) {
		t.Errorf("plan: %d clusters, holds %q; want 3, the rollout waiting for approval", len(d.Clusters), d.Holds)
	}
	crdWrites := func(ev localfleet.AuditEvent) bool {
		return ev.ObjectRef.Resource == "customresourcedefinitions" && ev.ObjectRef.Name == crdName
	}
	for _, s := range []string{"spoke-b", "spoke-c"} {
		if w := e.flotillaWrites(t, s, since, crdWrites); len(w) > 0 {
			t.Errorf("the rollout holds %s, yet its CRD was written: %s", s, strings.Join(w, "; "))
		}
		if got := revisionOn(s); got != first {
			t.Errorf("%s serves revision %s, want %s", s, got, first)
		}
	}
	// A held cluster's instances keep expanding, with the graph of the revision it serves.
	e.instanceExpanded(t, "spoke-b", webapp, "held", nil)

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rgd := &kro.ResourceGraphDefinition{}
		if err := e.hub.Get(ctx, client.ObjectKey{Name: webapp.Name}, rgd); err != nil {
			return err
		}
		if rgd.Annotations == nil {
			rgd.Annotations = map[string]string{}
		}
		rgd.Annotations[flotillav1.AnnotationApprove] = "fleet@" + second
		return e.hub.Update(ctx, rgd)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"spoke-b", "spoke-c"} {
		e.served(t, s, crdName, changed, changed.Generation)
		if got := revisionOn(s); got != second {
			t.Errorf("%s serves revision %s after the approval, want %s", s, got, second)
		}
	}
}
