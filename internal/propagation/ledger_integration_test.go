package propagation_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/propagation"
)

// What a Propagation delivered where is known from its Delivery records, not from its status:
// an owner on more clusters than its status lists, and an owner whose status was wiped while
// the controller was down (a restore from backup), are still removed from exactly the clusters
// they leave, and nothing else is deleted anywhere. Deletions are read from the spokes' audit
// logs: Flotilla would restore a wrongly deleted object within milliseconds.
func TestRecordsOutliveTheStatus(t *testing.T) {
	// The status lists one cluster of three.
	t.Cleanup(propagation.SetMaxClusterResults(1))
	// Controllers restarted in a subtest run until the whole test ends, not just the subtest.
	whole := t
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us", "spoke-c": "ap"})
	ctx := context.Background()
	start := time.Now()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu", "us", "ap"}}}}}})
	e.create(t, configMap("ledger", nil, "v"))
	e.create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: "team"}})
	e.create(t, propagationOf("ledger", flotillav1.PropagationStrategy{}, "ConfigMap/ledger", "ServiceAccount/ledger"))
	p := e.applied(t, "ledger", flotillav1.ReasonApplied, 3)
	if len(p.Status.ClusterResults) != 1 {
		t.Fatalf("status lists %d clusters, want 1 (the lowered bound)", len(p.Status.ClusterResults))
	}
	e.records(t, "ledger", "spoke-a", "spoke-b", "spoke-c")
	// Objects on the spokes that are not Flotilla's, next to its own.
	for _, spoke := range []string{"spoke-a", "spoke-b", "spoke-c"} {
		if err := e.spokes[spoke].Create(ctx, configMap("bystander", nil, "theirs")); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a cluster the status does not list is emptied exactly", func(t *testing.T) {
		listed := p.Status.ClusterResults[0].Cluster
		var leaving string
		for _, c := range []string{"spoke-c", "spoke-b", "spoke-a"} {
			if c != listed {
				leaving = c
				break
			}
		}
		var keep []string
		for spoke, region := range map[string]string{"spoke-a": "eu", "spoke-b": "us", "spoke-c": "ap"} {
			if spoke != leaving {
				keep = append(keep, region)
			}
		}
		e.setRegions(t, keep...)
		e.onSpoke(t, leaving, configMap("ledger", nil, ""), true, nil)
		e.onSpoke(t, leaving, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: "team"}}, true, nil)
		e.applied(t, "ledger", flotillav1.ReasonApplied, 2)
		e.onlyDeleted(t, start, map[string][]string{leaving: {"configmaps/ledger", "serviceaccounts/ledger"}})
		remaining := []string{"spoke-a", "spoke-b", "spoke-c"}
		remaining = slices.DeleteFunc(remaining, func(c string) bool { return c == leaving })
		e.records(t, "ledger", remaining...)
	})

	t.Run("a status wiped while the controller was down loses nothing", func(t *testing.T) {
		records := e.records(t, "ledger")
		e.controller.Stop()
		p := &flotillav1.Propagation{}
		if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "ledger"}, p); err != nil {
			t.Fatal(err)
		}
		p.Status = flotillav1.PropagationStatus{}
		if err := e.hub.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		// Keep the first of the two clusters left; the other leaves while no one watches.
		leaving := records[1]
		regions := map[string]string{"spoke-a": "eu", "spoke-b": "us", "spoke-c": "ap"}
		e.setRegions(t, regions[records[0]])
		since := time.Now()
		e.controller = hubtest.Run(whole, e.fleet)
		e.onSpoke(t, leaving, configMap("ledger", nil, ""), true, nil)
		e.onSpoke(t, leaving, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: "team"}}, true, nil)
		e.applied(t, "ledger", flotillav1.ReasonApplied, 1)
		e.onlyDeleted(t, since, map[string][]string{leaving: {"configmaps/ledger", "serviceaccounts/ledger"}})
		e.records(t, "ledger", records[0])
	})

	t.Run("a wiped Placement status does not un-stick a cordoned cluster", func(t *testing.T) {
		e.setRegions(t, "eu", "us", "ap")
		e.applied(t, "ledger", flotillav1.ReasonApplied, 3)
		e.records(t, "ledger", "spoke-a", "spoke-b", "spoke-c")
		// A cordoned cluster keeps what it has because it was chosen before.
		cordon := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-c"}}
		e.updateHub(t, cordon, func() { cordon.Spec.Unschedulable = true })
		e.controller.Stop()
		pl := &flotillav1.Placement{}
		if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "all"}, pl); err != nil {
			t.Fatal(err)
		}
		pl.Status = flotillav1.PlacementStatus{}
		if err := e.hub.Status().Update(ctx, pl); err != nil {
			t.Fatal(err)
		}
		since := time.Now()
		e.controller = hubtest.Run(whole, e.fleet)
		fleettest.Eventually(t, wait, "the Placement decides again, spoke-c included", func() error {
			if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "all"}, pl); err != nil {
				return err
			}
			if pl.Status.ObservedGeneration != pl.Generation || len(pl.Status.Decisions) != 3 {
				return fmt.Errorf("decisions %v at generation %d", pl.Status.Decisions, pl.Status.ObservedGeneration)
			}
			return nil
		})
		e.applied(t, "ledger", flotillav1.ReasonApplied, 3)
		e.onlyDeleted(t, since, nil)
	})
}

// setRegions makes the "all" Placement choose the clusters of these regions.
func (e *env) setRegions(t *testing.T, regions ...string) {
	t.Helper()
	pl := &flotillav1.Placement{}
	if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "all"}, pl); err != nil {
		t.Fatal(err)
	}
	pl.Spec.ClusterSelector.MatchExpressions[0].Values = regions
	if err := e.hub.Update(context.Background(), pl); err != nil {
		t.Fatal(err)
	}
}

// records waits until a Propagation's Delivery records name exactly these clusters (when any
// are given) and returns the clusters they name, sorted.
func (e *env) records(t *testing.T, owner string, want ...string) []string {
	t.Helper()
	sort.Strings(want)
	var got []string
	fleettest.Eventually(t, wait, fmt.Sprintf("Delivery records of %s on %v", owner, want), func() error {
		var list flotillav1.DeliveryList
		if err := e.hub.List(context.Background(), &list, client.InNamespace("team")); err != nil {
			return err
		}
		got = nil
		for _, d := range list.Items {
			if d.Spec.Owner.Kind == "Propagation" && d.Spec.Owner.Name == owner {
				got = append(got, d.Spec.Cluster)
				if len(d.Spec.Kinds) != 2 || len(d.OwnerReferences) != 1 || d.OwnerReferences[0].Name != owner {
					return fmt.Errorf("record %s: kinds %v, owner references %v", d.Name, d.Spec.Kinds, d.OwnerReferences)
				}
			}
		}
		sort.Strings(got)
		if len(want) > 0 && !slices.Equal(got, want) {
			return fmt.Errorf("records on %v", got)
		}
		return nil
	})
	return got
}

// onlyDeleted checks, from every spoke's audit log, that Flotilla deleted nothing since a time
// but the listed objects ("resource/name", namespace team) on the listed spokes.
func (e *env) onlyDeleted(t *testing.T, since time.Time, want map[string][]string) {
	t.Helper()
	for spoke := range e.spokes {
		events, err := e.fleet.Plane(spoke).AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range events {
			if ev.Verb == "delete" && ev.StageTimestamp.After(since) && isFlotilla(ev) {
				got = append(got, ev.ObjectRef.Resource+"/"+ev.ObjectRef.Name)
			}
		}
		sort.Strings(got)
		w := slices.Clone(want[spoke])
		sort.Strings(w)
		if !slices.Equal(got, w) {
			t.Errorf("Flotilla deleted %v on %s, want exactly %v", got, spoke, w)
		}
	}
}

func isFlotilla(ev localfleet.AuditEvent) bool {
	return strings.HasPrefix(ev.UserAgent, "flotilla")
}
