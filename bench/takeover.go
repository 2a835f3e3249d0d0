package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

const (
	takeoverNS       = "bench-takeover"
	takeoverReplicas = 3
	takeoverObjects  = 20
)

// takeover: the hub controller is replaced by three `flotilla hub --shard` replicas that divide
// the spokes (docs/ha.md). With their objects on every spoke, the replica holding spoke-1 (its
// fence Lease says which) is killed with SIGKILL and a hub edit is made at once: takeover is the
// seconds until the edit is on spoke-1 (target ≤ 20 s: the replicas' 15 s Leases and a look).
// takeover_writers counts the replicas that wrote to spoke-1 and checks from its audit log that
// they wrote one at a time (each one's writes an unbroken run). The single hub controller is back
// afterwards.
func (b *bench) takeover(ctx context.Context, r *report) error {
	b.proc.stop()
	replicas := map[string]*process{}
	defer func() {
		for _, p := range replicas {
			if p.cmd.ProcessState == nil {
				p.stop()
			}
		}
		if proc, err := startHub(b.binDir, b.hubKC, b.hubArgs()...); err == nil {
			b.proc = proc // what any later scenario, and the end of the run, stop
		}
	}()
	since := time.Now()
	for i := range takeoverReplicas {
		name := fmt.Sprintf("hub-%d", i)
		p, err := startHub(b.binDir, b.hubKC, "--leader-elect=true", "--shard", "--replica-name", name, "--probe-interval=1s")
		if err != nil {
			return err
		}
		replicas[name] = p
	}
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return err
	}
	p := b.p
	p.Objects = takeoverObjects
	arrived, err := watchArrivals(ctx, b.spokes, takeoverNS, selector, hasVersion("v0"))
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: takeoverNS}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: takeoverNS}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "takeover", Namespace: takeoverNS},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}}}}}},
	} {
		if err := b.hub.Create(ctx, obj); err != nil {
			return err
		}
	}
	if err := applyAll(ctx, hubCS, takeoverNS, p, "v0"); err != nil {
		return err
	}
	if err := arrived.wait(takeoverObjects, deliveryTimeout); err != nil {
		return err
	}
	victim, err := b.fenceHolder(ctx, "spoke-1")
	if err != nil {
		return err
	}
	if replicas[victim] == nil {
		return fmt.Errorf("spoke-1's fence is held by %q, not by a replica of the scenario", victim)
	}
	edited, err := watchArrivals(ctx, b.spokes[:1], takeoverNS, selector, hasVersion("after"))
	if err != nil {
		return err
	}
	_ = replicas[victim].cmd.Process.Signal(syscall.SIGKILL)
	<-replicas[victim].exited
	killed := time.Now()
	if err := applyRange(ctx, hubCS, takeoverNS, p, "after", 1); err != nil {
		return err
	}
	if err := edited.wait(1, deliveryTimeout); err != nil {
		return err
	}
	took := time.Since(killed).Seconds()
	successor, err := b.fenceHolder(ctx, "spoke-1")
	if err != nil {
		return err
	}
	writers, err := spokeWriters(b.fleet.Plane("spoke-1").AuditEvents, since)
	if err != nil {
		return err
	}
	if len(writers) != len(slicesCompact(writers)) {
		return fmt.Errorf("replicas wrote to spoke-1 in turn %v: one wrote again after another had", writers)
	}
	r.add("takeover", "s", f(took), nil, fmt.Sprintf("SIGKILL of %s, which held spoke-1; %s took it over, and a hub edit made at the kill reached spoke-1 after %.1f s (%d replicas, %d spokes)",
		victim, successor, took, takeoverReplicas, b.p.Spokes))
	r.add("takeover_writers", "replicas", f(float64(len(writers))), nil, fmt.Sprintf("replicas that wrote to spoke-1, in turn: %s; never two at once", strings.Join(writers, " then ")))
	return nil
}

// fenceHolder is the replica holding a cluster's fence Lease (package shard), once one does.
func (b *bench) fenceHolder(ctx context.Context, cluster string) (string, error) {
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var l coordinationv1.Lease
		if err := b.hub.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-" + cluster}, &l); err != nil {
			return false, nil
		}
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return holder != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("no replica holds %s's fence Lease: %w", cluster, err)
	}
	return holder, nil
}

// spokeWriters are the replicas whose writes a spoke's audit log shows since a time, one entry
// per unbroken run of one replica's writes.
func spokeWriters(events func() ([]localfleet.AuditEvent, error), since time.Time) ([]string, error) {
	evs, err := events()
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, ev := range evs {
		writer, _, _ := strings.Cut(strings.TrimPrefix(ev.UserAgent, "flotilla/"), " ")
		if !ev.Mutating() || ev.RequestReceivedTimestamp.Before(since) || !strings.HasPrefix(ev.UserAgent, "flotilla/hub-") {
			continue
		}
		if len(runs) == 0 || runs[len(runs)-1] != writer {
			runs = append(runs, writer)
		}
	}
	return runs, nil
}

// slicesCompact is s without repeats, in order of first appearance.
func slicesCompact(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
