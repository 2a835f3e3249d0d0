package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// wait bounds each step of the safety suite.
const wait = 60 * time.Second

// ownerCase is one owner kind as the cross-kind safety suite drives it: what it delivers to
// each spoke (one object), its own Placement, where it says a removal waits for a
// confirmation, and how that confirmation is given.
type ownerCase struct {
	name string
	// placement is the owner's own Placement.
	placement client.ObjectKey
	// create makes the owner and what it delivers on the hub.
	create func(ctx context.Context, hub client.Client) error
	// delivered is the object it puts on each spoke, and its audit resource.
	delivered          func() client.Object
	resource           string
	deliveredNamespace string
	// says returns what the owner says of its pass: its conditions', Events' or cluster rows'
	// messages (a confirmation asked for among them).
	says func(ctx context.Context, hub client.Client) ([]string, error)
	// confirm annotates the object that takes the confirmation.
	confirm func(ctx context.Context, hub client.Client, value string) error
	// breaksFirst says a move removes the object where it leaves before it is Ready where it
	// goes (a fleet API's CRD: see docs/architecture.md); every other kind makes before it
	// breaks.
	breaksFirst bool
	// For the kinds that pin clusters to revisions through the one owner pass: owner names
	// the owner's records, edit changes what it delivers (the hub ConfigMap's data.k), pin
	// holds a cluster at a revision ("": no pin).
	// running, when set, says which revision a cluster runs (else its record's spec.work);
	// valueOf reads what a delivered copy holds (else the ConfigMap's data.k).
	owner   render.Owner
	edit    func(ctx context.Context, hub client.Client, value string) error
	pin     func(ctx context.Context, hub client.Client, cluster, revision string) error
	running func(ctx context.Context, hub client.Client, cluster string) (string, error)
	valueOf func(obj client.Object) string
	// selects makes the owner select what it delivers, or nothing (a Propagation's selector,
	// a transparent object's placement label, an APIPropagation's RGD names); deselected
	// succeeds once the owner says it selects nothing.
	selects    func(ctx context.Context, hub client.Client, on bool) error
	deselected func(ctx context.Context, hub client.Client) error
}

// tallyRGD is a fleet API whose CRD the suite's APIPropagation serves.
const tallyRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: tally
spec:
  schema:
    apiVersion: v1alpha1
    kind: Tally
    spec:
      count: integer | default=1
      release: string | default="v"
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}
      data:
        count: ${string(schema.spec.count)}
`

func ownerCases(t *testing.T) []ownerCase {
	rgd := &kro.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(tallyRGD), rgd); err != nil {
		t.Fatal(err)
	}
	crdName := kro.CRDName(rgd)
	annotate := func(obj client.Object) func(ctx context.Context, hub client.Client, value string) error {
		return func(ctx context.Context, hub client.Client, value string) error {
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, flotillav1.AnnotationConfirmPrune, value)
			return hub.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", patch))
		}
	}
	configMap := func(namespace, name string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
	}
	editData := func(obj client.Object) func(ctx context.Context, hub client.Client, value string) error {
		return func(ctx context.Context, hub client.Client, value string) error {
			return hub.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"data":{"k":%q}}`, value)))
		}
	}
	eventMessages := func(namespace, name string) func(ctx context.Context, hub client.Client) ([]string, error) {
		return func(ctx context.Context, hub client.Client) ([]string, error) {
			var events corev1.EventList
			if err := hub.List(ctx, &events, client.InNamespace(namespace)); err != nil {
				return nil, err
			}
			var out []string
			for _, ev := range events.Items {
				if ev.InvolvedObject.Name == name {
					out = append(out, ev.Message)
				}
			}
			return out, nil
		}
	}
	return []ownerCase{
		{
			name:      "Propagation",
			placement: client.ObjectKey{Namespace: "team-p", Name: "p"},
			create: func(ctx context.Context, hub client.Client) error {
				return createAll(ctx, hub, configMap("team-p", "by-propagation", nil),
					&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-p", Name: "web"}, Spec: flotillav1.PropagationSpec{
						PlacementRef:      flotillav1.PlacementRef{Name: "p"},
						ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "by-propagation"}},
					}})
			},
			delivered:          func() client.Object { return configMap("team-p", "by-propagation", nil) },
			resource:           "configmaps",
			deliveredNamespace: "team-p",
			says: func(ctx context.Context, hub client.Client) ([]string, error) {
				p := &flotillav1.Propagation{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: "team-p", Name: "web"}, p); err != nil {
					return nil, err
				}
				var out []string
				for _, c := range p.Status.Conditions {
					if c.Status == metav1.ConditionTrue || c.Type == flotillav1.PropagationApplied {
						out = append(out, c.Message)
					}
				}
				return out, nil
			},
			confirm: annotate(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-p", Name: "web"}}),
			owner:   render.Owner{Kind: "Propagation", Namespace: "team-p", Name: "web"},
			edit:    editData(configMap("team-p", "by-propagation", nil)),
			pin: func(ctx context.Context, hub client.Client, cluster, revision string) error {
				pins := "null"
				if revision != "" {
					pins = fmt.Sprintf(`[{"cluster":%q,"revision":%q}]`, cluster, revision)
				}
				return hub.Patch(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-p", Name: "web"}},
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"revisionPins":%s}}`, pins)))
			},
			selects: func(ctx context.Context, hub client.Client, on bool) error {
				name := "by-propagation"
				if !on {
					name = "nothing"
				}
				return hub.Patch(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-p", Name: "web"}},
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"resourceSelectors":[{"apiVersion":"v1","kind":"ConfigMap","name":%q}]}}`, name)))
			},
			deselected: func(ctx context.Context, hub client.Client) error {
				o := &flotillav1.Propagation{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: "team-p", Name: "web"}, o); err != nil {
					return err
				}
				if c := meta.FindStatusCondition(o.Status.Conditions, flotillav1.PropagationApplied); c == nil || c.Reason != flotillav1.ReasonNothingSelected || c.ObservedGeneration != o.Generation {
					return fmt.Errorf("conditions %v", o.Status.Conditions)
				}
				return nil
			},
		},
		{
			name:      "transparent ConfigMap",
			placement: client.ObjectKey{Namespace: "team-t", Name: "t"},
			create: func(ctx context.Context, hub client.Client) error {
				return createAll(ctx, hub, configMap("team-t", "transparent", map[string]string{flotillav1.LabelPlacement: "t"}))
			},
			delivered:          func() client.Object { return configMap("team-t", "transparent", nil) },
			resource:           "configmaps",
			deliveredNamespace: "team-t",
			says:               eventMessages("team-t", "transparent"),
			confirm:            annotate(configMap("team-t", "transparent", nil)),
			owner:              render.Owner{Kind: "ConfigMap", Namespace: "team-t", Name: "transparent"},
			edit:               editData(configMap("team-t", "transparent", nil)),
			pin: func(ctx context.Context, hub client.Client, cluster, revision string) error {
				value := "null"
				if revision != "" {
					value = fmt.Sprintf("%q", cluster+"="+revision)
				}
				return hub.Patch(ctx, configMap("team-t", "transparent", nil),
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, flotillav1.AnnotationRevisionPins, value)))
			},
			selects: func(ctx context.Context, hub client.Client, on bool) error {
				value := "null"
				if on {
					value = `"t"`
				}
				return hub.Patch(ctx, configMap("team-t", "transparent", nil),
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{%q:%s}}}`, flotillav1.LabelPlacement, value)))
			},
			deselected: func(ctx context.Context, hub client.Client) error {
				msgs, err := eventMessages("team-t", "transparent")(ctx, hub)
				for _, m := range msgs {
					if strings.Contains(m, "label "+flotillav1.LabelPlacement+" was removed") {
						return err
					}
				}
				return fmt.Errorf("messages %q (%v)", msgs, err)
			},
		},
		{
			name:      "APIPropagation",
			placement: client.ObjectKey{Namespace: membership.Namespace, Name: "a"},
			create: func(ctx context.Context, hub client.Client) error {
				return createAll(ctx, hub, rgd, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: flotillav1.APIPropagationSpec{
					ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{rgd.Name}},
					PlacementRef:             flotillav1.PlacementRef{Namespace: membership.Namespace, Name: "a"},
					Removal:                  flotillav1.DeletionDelete,
				}})
			},
			delivered: func() client.Object {
				return &extv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}}
			},
			resource:    "customresourcedefinitions",
			breaksFirst: true,
			says: func(ctx context.Context, hub client.Client) ([]string, error) {
				p := &flotillav1.APIPropagation{}
				if err := hub.Get(ctx, client.ObjectKey{Name: "platform"}, p); err != nil {
					return nil, err
				}
				var out []string
				for _, row := range p.Status.ClusterResults {
					out = append(out, row.Message)
				}
				return out, nil
			},
			confirm: annotate(&flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}}),
			owner:   render.Owner{Kind: fleetapi.OwnerKind, Name: rgd.Name},
			edit: func(ctx context.Context, hub client.Client, value string) error {
				return hub.Patch(ctx, &kro.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: rgd.Name}},
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"schema":{"spec":{"release":"string | default=\"%s\""}}}}`, value)))
			},
			pin: func(ctx context.Context, hub client.Client, cluster, revision string) error {
				pins := "null"
				if revision != "" {
					pins = fmt.Sprintf(`[{"resourceGraphDefinition":%q,"cluster":%q,"revision":%q}]`, rgd.Name, cluster, revision)
				}
				return hub.Patch(ctx, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}},
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"revisionPins":%s}}`, pins)))
			},
			running: func(ctx context.Context, hub client.Client, _ string) (string, error) {
				// Every cluster serves the RGD's one revision so far.
				kept, err := (&revisions.Store{Metadata: hub, Reader: hub}).List(ctx, render.Owner{Kind: fleetapi.OwnerKind, Name: rgd.Name})
				if err != nil || len(kept) != 1 {
					return "", fmt.Errorf("revisions %v (%v)", kept, err)
				}
				return kept[0].Name, nil
			},
			valueOf: func(obj client.Object) string {
				crd := obj.(*extv1.CustomResourceDefinition)
				for _, v := range crd.Spec.Versions {
					if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
						continue
					}
					if def := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["release"].Default; def != nil {
						var release string
						_ = json.Unmarshal(def.Raw, &release)
						return release
					}
				}
				return ""
			},
			selects: func(ctx context.Context, hub client.Client, on bool) error {
				name := rgd.Name
				if !on {
					name = "nothing"
				}
				return hub.Patch(ctx, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}},
					client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"resourceGraphDefinitions":{"names":[%q]}}}`, name)))
			},
			deselected: func(ctx context.Context, hub client.Client) error {
				o := &flotillav1.APIPropagation{}
				if err := hub.Get(ctx, client.ObjectKey{Name: "platform"}, o); err != nil {
					return err
				}
				if c := meta.FindStatusCondition(o.Status.Conditions, flotillav1.APIPropagationAccepted); c == nil || c.Reason != flotillav1.ReasonNothingSelected || c.ObservedGeneration != o.Generation {
					return fmt.Errorf("conditions %v", o.Status.Conditions)
				}
				return nil
			},
		},
	}
}

func createAll(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// TestSafetyEveryOwnerKind runs the same safety cases against every owner kind on one hub and
// three audited spokes: a Placement that shrinks from three clusters to one, one that chooses
// nothing, and one that is deleted. Each removal waits for the confirmation its message names,
// and the spokes' audit logs prove that nothing was deleted before it, and exactly what was
// confirmed after (Flotilla would restore a wrongly deleted object within moments, so its
// presence proves nothing).
func TestSafetyEveryOwnerKind(t *testing.T) {
	ctx := context.Background()
	spokes := []string{"a", "b", "c"}
	specs := []localfleet.PlaneSpec{fleettest.Hub()}
	for _, name := range spokes {
		s := fleettest.APIOnlySpoke(name)
		s.AuditLog = true
		specs = append(specs, s)
	}
	fleet := fleettest.Start(t, specs...)
	hub := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokeClients := map[string]client.Client{}
	for _, name := range spokes {
		if err := membership.Join(ctx, hub, membership.JoinOptions{Name: name, Spoke: fleet.Plane(name).RESTConfig()}); err != nil {
			t.Fatal(err)
		}
		c, err := client.New(fleet.Plane(name).RESTConfig(), client.Options{Scheme: install.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		spokeClients[name] = c
	}
	if err := createAll(ctx, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-p"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-t"}}); err != nil {
		t.Fatal(err)
	}
	suite := freezePlacements(t, fleet, hub)

	t.Run("kinds", func(t *testing.T) {
		for _, k := range ownerCases(t) {
			t.Run(k.name, func(t *testing.T) {
				t.Parallel()
				s := safetyRun{t: t, ctx: ctx, hub: hub, suite: suite, fleet: fleet, spokes: spokeClients, k: k}
				s.choose(spokes...)
				if err := k.create(ctx, hub); err != nil {
					t.Fatal(err)
				}
				s.on(true, spokes...)

				// A pinned cluster keeps its revision, written nowhere, while the others take the
				// owner's change; unpinned, it takes it too.
				if k.pin != nil {
					if err := k.pin(ctx, hub, "a", s.runs("a")); err != nil {
						t.Fatal(err)
					}
					edited := time.Now()
					if err := k.edit(ctx, hub, "v2"); err != nil {
						t.Fatal(err)
					}
					s.holds(map[string]string{"a": "v", "b": "v2", "c": "v2"})
					s.writes("a", edited, 0)
					if err := k.pin(ctx, hub, "a", ""); err != nil {
						t.Fatal(err)
					}
					s.holds(map[string]string{"a": "v2"})
				}

				// A Placement whose status lags its spec: it says, for the generation before, that
				// it chooses b and c (a removal from a alone, within the budget). Nothing is
				// removed until the scheduler has caught up, and then nothing at all: the spec
				// chooses all three.
				release := s.lagging("b", "c")
				s.said("has not scheduled its latest change yet")
				s.deletes(map[string]int{"a": 0, "b": 0, "c": 0})
				release()
				s.deletes(map[string]int{"a": 0, "b": 0, "c": 0})

				// The owner selects nothing: nothing is removed (a Propagation keeps what it
				// delivered until it selects again, a transparent object asks for a confirmation,
				// an APIPropagation orphans its APIs), and selecting again changes nothing.
				if err := k.selects(ctx, hub, false); err != nil {
					t.Fatal(err)
				}
				fleettest.Eventually(t, wait, k.name+" says it selects nothing", func() error { return k.deselected(ctx, hub) })
				s.deletes(map[string]int{"a": 0, "b": 0, "c": 0})
				if err := k.selects(ctx, hub, true); err != nil {
					t.Fatal(err)
				}
				s.on(true, spokes...)
				s.deletes(map[string]int{"a": 0, "b": 0, "c": 0})

				// Removal from most clusters: two of three leave.
				s.choose("c")
				token := s.blocked("from 2 of the 3 clusters")
				s.deletes(map[string]int{"a": 0, "b": 0, "c": 0})
				s.confirmWith(token)
				s.on(false, "a", "b")
				s.on(true, "c")
				s.deletes(map[string]int{"a": 1, "b": 1, "c": 0})

				// A move from c to a (half of the clusters the change touches: within the
				// budget): made on a before c's copy is removed.
				moved := time.Now()
				s.choose("a")
				s.on(true, "a")
				s.on(false, "c")
				s.deletes(map[string]int{"a": 1, "b": 1, "c": 1})
				if !k.breaksFirst {
					s.madeBeforeBroken("a", "c", moved)
				}

				// The Placement chooses nothing.
				s.choose("typo")
				token = s.blocked("chooses no cluster")
				s.deletes(map[string]int{"a": 1, "b": 1, "c": 1})
				s.confirmWith(token)
				s.on(false, "a")
				s.deletes(map[string]int{"a": 2, "b": 1, "c": 1})

				// Back everywhere, then the Placement is deleted: nothing is removed.
				s.choose(spokes...)
				s.on(true, spokes...)
				if err := hub.Delete(ctx, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: k.placement.Namespace, Name: k.placement.Name}}); err != nil {
					t.Fatal(err)
				}
				s.deletes(map[string]int{"a": 2, "b": 1, "c": 1})
			})
		}
	})
}

// safetyRun drives one owner kind through the suite.
type safetyRun struct {
	t   *testing.T
	ctx context.Context
	hub client.Client
	// suite writes Placement statuses past the admission policy that refuses the
	// scheduler's writes of frozen Placements (freezePlacements).
	suite  client.Client
	fleet  *localfleet.Fleet
	spokes map[string]client.Client
	k      ownerCase
}

// choose makes the owner's Placement choose clusters by name.
func (s safetyRun) choose(clusters ...string) {
	s.t.Helper()
	fleettest.Eventually(s.t, wait, fmt.Sprintf("Placement %s chooses %v", s.k.placement, clusters), func() error {
		pl := &flotillav1.Placement{}
		err := s.hub.Get(s.ctx, s.k.placement, pl)
		if apierrors.IsNotFound(err) {
			pl = &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: s.k.placement.Namespace, Name: s.k.placement.Name},
				Spec: flotillav1.PlacementSpec{ClusterNames: clusters}}
			return s.hub.Create(s.ctx, pl)
		}
		if err != nil {
			return err
		}
		pl.Spec.ClusterNames = clusters
		return s.hub.Update(s.ctx, pl)
	})
}

// on waits until the owner's object is (or is not) on each of clusters.
func (s safetyRun) on(present bool, clusters ...string) {
	s.t.Helper()
	for _, c := range clusters {
		fleettest.Eventually(s.t, wait, fmt.Sprintf("%s's object on %s: %v", s.k.name, c, present), func() error {
			obj := s.k.delivered()
			err := s.spokes[c].Get(s.ctx, client.ObjectKeyFromObject(obj), obj)
			switch {
			case present && err != nil:
				return err
			case !present && !apierrors.IsNotFound(err):
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
	}
}

// blocked waits for the message asking for a confirmation that contains what, and returns the
// confirmation it names.
func (s safetyRun) blocked(what string) string {
	s.t.Helper()
	var msg string
	fleettest.Eventually(s.t, wait, fmt.Sprintf("%s: a confirmation asked for (%s)", s.k.name, what), func() error {
		msgs, err := s.k.says(s.ctx, s.hub)
		if err != nil {
			return err
		}
		for _, msg = range msgs {
			if strings.Contains(msg, what) && strings.Contains(msg, flotillav1.AnnotationConfirmPrune+"=") {
				return nil
			}
		}
		return fmt.Errorf("messages %q", msgs)
	})
	return msg[strings.LastIndex(msg, "=")+1:]
}

// said waits until the owner says what (in a condition, an Event or a cluster row).
func (s safetyRun) said(what string) {
	s.t.Helper()
	fleettest.Eventually(s.t, wait, fmt.Sprintf("%s says %q", s.k.name, what), func() error {
		msgs, err := s.k.says(s.ctx, s.hub)
		if err != nil {
			return err
		}
		for _, msg := range msgs {
			if strings.Contains(msg, what) {
				return nil
			}
		}
		return fmt.Errorf("messages %q", msgs)
	})
}

func (s safetyRun) confirmWith(token string) {
	s.t.Helper()
	if err := s.k.confirm(s.ctx, s.hub, token); err != nil {
		s.t.Fatal(err)
	}
}

// runs is the revision a cluster runs of the owner: as the kind says, or as its record says
// (spec.work).
func (s safetyRun) runs(cluster string) string {
	s.t.Helper()
	var revision string
	fleettest.Eventually(s.t, wait, fmt.Sprintf("%s: the revision %s runs", s.k.name, cluster), func() error {
		if s.k.running != nil {
			var err error
			revision, err = s.k.running(s.ctx, s.hub, cluster)
			return err
		}
		records, err := (&ledger.Ledger{Hub: s.hub, Owners: flotillahub.RecordOwners()}).Records(s.ctx, s.k.owner)
		if err != nil {
			return err
		}
		if rec := records[cluster]; rec != nil && rec.Spec.Work != nil && rec.Spec.Work.Revision != "" {
			revision = rec.Spec.Work.Revision
			return nil
		}
		return fmt.Errorf("records %v", records)
	})
	return revision
}

// holds waits until each cluster's copy holds data.k as want says.
func (s safetyRun) holds(want map[string]string) {
	s.t.Helper()
	fleettest.Eventually(s.t, wait, fmt.Sprintf("%s: copies %v", s.k.name, want), func() error {
		for c, v := range want {
			obj := s.k.delivered()
			if err := s.spokes[c].Get(s.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			got := ""
			if s.k.valueOf != nil {
				got = s.k.valueOf(obj)
			} else {
				got = obj.(*corev1.ConfigMap).Data["k"]
			}
			if got != v {
				return fmt.Errorf("%s holds %q", c, got)
			}
		}
		return nil
	})
}

// writes checks, for a few seconds, that a spoke's audit log shows n writes of the owner's
// object since a time: requests received since then. A write received before it may complete
// after it (its object is readable once stored, before the response is done): that is not a
// write made since.
func (s safetyRun) writes(cluster string, since time.Time, n int) {
	s.t.Helper()
	fleettest.Consistently(s.t, 2*time.Second, fmt.Sprintf("%s: %d writes on %s", s.k.name, n, cluster), func() error {
		events, err := s.fleet.Plane(cluster).AuditEvents()
		if err != nil {
			return err
		}
		got, obj := 0, s.k.delivered()
		for _, ev := range events {
			if ev.Mutating() && ev.ObjectRef.Resource == s.k.resource && ev.ObjectRef.Name == obj.GetName() && ev.ObjectRef.Namespace == s.k.deliveredNamespace &&
				ev.ResponseStatus.Code < 300 && !strings.Contains(ev.RequestURI, "dryRun=") && ev.RequestReceivedTimestamp.After(since) {
				got++
			}
		}
		if got != n {
			return fmt.Errorf("%d writes", got)
		}
		return nil
	})
}

// madeBeforeBroken checks from the audit logs that, since a move began, the owner's object
// was first written on to before it was deleted on from.
func (s safetyRun) madeBeforeBroken(to, from string, since time.Time) {
	s.t.Helper()
	first := func(plane string, write bool) (at time.Time) {
		events, err := s.fleet.Plane(plane).AuditEvents()
		if err != nil {
			s.t.Fatal(err)
		}
		obj := s.k.delivered()
		for _, ev := range events {
			if ev.ObjectRef.Resource != s.k.resource || strings.Contains(ev.RequestURI, "/status") || ev.ObjectRef.Name != obj.GetName() ||
				ev.ObjectRef.Namespace != s.k.deliveredNamespace || ev.ResponseStatus.Code >= 300 ||
				strings.Contains(ev.RequestURI, "dryRun=") || !ev.StageTimestamp.After(since) {
				continue
			}
			if (write && ev.Mutating() && ev.Verb != "delete") || (!write && ev.Verb == "delete") {
				return ev.StageTimestamp
			}
		}
		return at
	}
	made, broken := first(to, true), first(from, false)
	if made.IsZero() || broken.IsZero() || !made.Before(broken) {
		s.t.Errorf("%s: written on %s at %s, deleted on %s at %s: want the write first", s.k.name, to, made.Format(time.StampMicro), from, broken.Format(time.StampMicro))
	}
}

// deletes checks, for a few seconds, that each spoke's audit log shows exactly want deletions
// of the owner's object by Flotilla.
func (s safetyRun) deletes(want map[string]int) {
	s.t.Helper()
	fleettest.Consistently(s.t, 2*time.Second, fmt.Sprintf("%s: deletions %v", s.k.name, want), func() error {
		for c, n := range want {
			events, err := s.fleet.Plane(c).AuditEvents()
			if err != nil {
				return err
			}
			got := 0
			obj := s.k.delivered()
			for _, ev := range events {
				if ev.Verb == "delete" && ev.ObjectRef.Resource == s.k.resource && ev.ObjectRef.Name == obj.GetName() &&
					ev.ObjectRef.Namespace == s.k.deliveredNamespace && ev.ResponseStatus.Code < 300 {
					got++
				}
			}
			if got != n {
				return fmt.Errorf("%s: %d deletions, want %d", c, got, n)
			}
		}
		return nil
	})
}
