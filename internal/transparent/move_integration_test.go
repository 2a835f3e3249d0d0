package transparent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// moveWait bounds each step of a move.
const moveWait = 60 * time.Second

// A transparent Deployment that moves (a relabelled cluster, a change of division, a NoExecute
// taint) never has fewer available replicas in the fleet than it asks for: new copies are
// made, and must be Ready, before old ones shrink or go. The spokes run no controllers, so the
// test plays the Deployment controller: it says when a copy's replicas are available, and holds
// that back to keep the window open. The fleet's available replicas are sampled throughout.
func TestMovesMakeBeforeBreak(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("a"), fleettest.APIOnlySpoke("b"), fleettest.APIOnlySpoke("c"))
	ctx := context.Background()
	hub := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokes := map[string]client.Client{}
	regions := map[string]string{"a": "eu", "b": "eu", "c": "us"}
	for _, s := range fleet.Spokes() {
		if err := membership.Join(ctx, hub, membership.JoinOptions{Name: s.Name(), Spoke: s.RESTConfig(), Labels: map[string]string{"region": regions[s.Name()]}}); err != nil {
			t.Fatal(err)
		}
		c, err := client.New(s.RESTConfig(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		spokes[s.Name()] = c
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "shop"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}},
		deployment("mover", 6, map[string]string{flotillav1.LabelPlacement: "eu"}),
	} {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	m := &mover{t: t, spokes: spokes}
	m.waitReplicas(map[string]int32{"a": 3, "b": 3})
	m.markAvailable("a", "b")
	m.sample()

	t.Run("relabelling moves a share: the new copy is Ready before the old one goes", func(t *testing.T) {
		relabel(t, hub, "c", "eu")
		relabel(t, hub, "a", "us")
		m.waitReplicas(map[string]int32{"a": 3, "b": 3, "c": 3})
		m.stays("a")
		m.markAvailable("c")
		m.waitReplicas(map[string]int32{"b": 3, "c": 3})
	})

	t.Run("a change of division grows the new share before the others shrink", func(t *testing.T) {
		relabel(t, hub, "a", "eu")
		// a gains 2 replicas; b and c keep 3 each until a's are Ready, then drop to 2.
		m.waitReplicas(map[string]int32{"a": 2, "b": 3, "c": 3})
		m.staysAt("b", 3)
		m.markAvailable("a")
		// A scale-down completes at once under a real controller: play that as b and c shrink,
		// so the one that shrinks first does not hold up the other.
		m.waitReplicas(map[string]int32{"a": 2, "b": 2, "c": 2}, "b", "c")
	})

	t.Run("a NoExecute taint drains a cluster make-before-break", func(t *testing.T) {
		c := &flotillav1.Cluster{}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := hub.Get(ctx, client.ObjectKey{Name: "c"}, c); err != nil {
				return err
			}
			c.Spec.Taints = []flotillav1.ClusterTaint{{Key: "decommission", Effect: flotillav1.TaintEffectNoExecute}}
			return hub.Update(ctx, c)
		}); err != nil {
			t.Fatal(err)
		}
		m.waitReplicas(map[string]int32{"a": 3, "b": 3, "c": 2})
		m.stays("c")
		m.markAvailable("a", "b")
		m.waitReplicas(map[string]int32{"a": 3, "b": 3})
	})

	t.Run("the records hold the division", func(t *testing.T) {
		fleettest.Eventually(t, time.Minute, "records of a and b with 3 replicas each, none of c", func() error {
			var list flotillav1.DeliveryList
			if err := hub.List(ctx, &list, client.InNamespace("shop")); err != nil {
				return err
			}
			got := map[string][]flotillav1.WorkloadReplicas{}
			for _, rec := range list.Items {
				got[rec.Spec.Cluster] = rec.Spec.Replicas
			}
			want := []flotillav1.WorkloadReplicas{{Object: "apps/Deployment/shop/mover", Replicas: 3}}
			if len(got) != 2 || !equality.Semantic.DeepEqual(got["a"], want) || !equality.Semantic.DeepEqual(got["b"], want) {
				return fmt.Errorf("records: %+v", got)
			}
			return nil
		})
	})

	if low := m.stop(); low < 6 {
		t.Errorf("the fleet had %d available replicas at one point, want never fewer than 6", low)
	}
}

// mover watches the copies of the Deployment "mover" on the spokes.
type mover struct {
	t      *testing.T
	spokes map[string]client.Client

	// stopSampling ends the sampling sample started and returns the fewest available replicas.
	stopSampling func() int64
}

// copies returns each spoke's copy of mover (spokes without one are absent).
func (m *mover) copies() (map[string]*appsv1.Deployment, error) {
	out := map[string]*appsv1.Deployment{}
	for name, c := range m.spokes {
		d := &appsv1.Deployment{}
		err := c.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "mover"}, d)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
}

// waitReplicas waits until exactly these spokes have a copy, with these replicas. The copies
// on shrinking spokes are marked available as soon as they ask for fewer replicas.
func (m *mover) waitReplicas(want map[string]int32, shrinking ...string) {
	m.t.Helper()
	fleettest.Eventually(m.t, moveWait, fmt.Sprintf("copies of mover: %v", want), func() error {
		got, err := m.copies()
		if err != nil {
			return err
		}
		for _, name := range shrinking {
			if d, ok := got[name]; ok && (*d.Spec.Replicas < d.Status.AvailableReplicas || d.Status.ObservedGeneration != d.Generation) && *d.Spec.Replicas <= want[name] {
				m.markAvailable(name)
			}
		}
		have := map[string]int32{}
		for name, d := range got {
			have[name] = *d.Spec.Replicas
		}
		if fmt.Sprint(have) != fmt.Sprint(want) {
			return fmt.Errorf("copies %v", have)
		}
		return nil
	})
}

// stays checks that a spoke keeps its copy while the move waits for readiness elsewhere.
func (m *mover) stays(spoke string) {
	m.t.Helper()
	fleettest.Consistently(m.t, 2*time.Second, "mover stays on "+spoke, func() error {
		got, err := m.copies()
		if err != nil {
			return err
		}
		if _, ok := got[spoke]; !ok {
			return fmt.Errorf("gone from %s", spoke)
		}
		return nil
	})
}

// staysAt checks that a spoke's copy keeps its replicas while the move waits.
func (m *mover) staysAt(spoke string, replicas int32) {
	m.t.Helper()
	fleettest.Consistently(m.t, 2*time.Second, fmt.Sprintf("mover keeps %d replicas on %s", replicas, spoke), func() error {
		got, err := m.copies()
		if err != nil {
			return err
		}
		if d, ok := got[spoke]; !ok || *d.Spec.Replicas != replicas {
			return fmt.Errorf("copy on %s: %v", spoke, d)
		}
		return nil
	})
}

// markAvailable plays the Deployment controller for the spokes' copies.
func (m *mover) markAvailable(spokes ...string) {
	m.t.Helper()
	for _, name := range spokes {
		fleettest.MarkAvailable(m.t, m.spokes[name], client.ObjectKey{Namespace: "shop", Name: "mover"})
	}
}

// sample starts recording the lowest number of available replicas over the fleet.
func (m *mover) sample() {
	m.stopSampling = fleettest.Low(m.t, 20*time.Millisecond, 1, func() (int64, error) {
		got, err := m.copies()
		var available int64
		for _, d := range got {
			available += int64(d.Status.AvailableReplicas)
		}
		return available, err
	})
}

// stop ends the sampling and returns the lowest number of available replicas seen.
func (m *mover) stop() int64 { return m.stopSampling() }

// relabel sets a Cluster's region.
func relabel(t *testing.T, hub client.Client, name, region string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &flotillav1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		c.Labels["region"] = region
		return hub.Update(context.Background(), c)
	}); err != nil {
		t.Fatal(err)
	}
}
