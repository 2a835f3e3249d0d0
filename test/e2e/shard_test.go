package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestShardedHubReplicaKilled runs three `flotilla hub --shard` replicas over three spokes. They
// divide the spokes between them, and a Propagation reaches every spoke. The replica holding
// spoke-1 (its fence Lease says which) is then killed with SIGKILL, and a hub edit is made at
// once: it reaches spoke-1 once another replica has taken the spoke over, and the takeover time
// is reported. The spokes' audit logs show, for every spoke, one replica writing at a time
// (each replica's writes are one unbroken run, never interleaved with another's) and no delete.
func TestShardedHubReplicaKilled(t *testing.T) {
	const objects = 20
	flotilla := buildFlotilla(t)
	fleet := fleettest.Start(t, standardPlanes()...)
	hubKC := fleet.Hub().KubeconfigPath()
	runFlotilla(t, flotilla, hubKC, "install", "--crds-only")
	replicas := map[string]*hubProcess{}
	for _, name := range []string{"hub-0", "hub-1", "hub-2"} {
		replicas[name] = startHubProcess(t, flotilla, hubKC, "--leader-elect=true", "--shard", "--replica-name", name)
	}
	for _, s := range fleet.Spokes() {
		runFlotilla(t, flotilla, hubKC, "join", s.Name(), "--kubeconfig", s.KubeconfigPath())
	}
	applyBulk(t, hubKC, objects)
	for _, s := range fleet.Spokes() {
		kc := s.KubeconfigPath()
		fleettest.Eventually(t, 120*time.Second, "all objects on "+s.Name(), func() error {
			if n := countConfigMaps(t, kc); n != objects {
				return fmt.Errorf("%d of %d", n, objects)
			}
			return nil
		})
	}
	eventuallyKubectl(t, hubKC, "3", "get", "propagation", "bulk", "-n", "bulk", "-o", "jsonpath={.status.appliedClusters}")

	hub, err := client.New(fleet.Hub().RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	holders := map[string]string{}
	for _, s := range fleet.Spokes() {
		holders[s.Name()] = fenceHolder(t, hub, s.Name())
	}
	t.Logf("fence holders: %v", holders)
	victim := holders["spoke-1"]
	if replicas[victim] == nil {
		t.Fatalf("spoke-1's fence is held by %q, not by a replica of the test", victim)
	}
	killed := time.Now()
	replicas[victim].kill(t)
	mustKubectl(t, hubKC, "patch", "configmap", "cm-000", "-n", "bulk", "--type=merge", "-p", `{"data":{"v":"after-the-kill"}}`)
	spoke1 := fleet.Plane("spoke-1").KubeconfigPath()
	eventuallyKubectl(t, spoke1, "after-the-kill", "get", "configmap", "cm-000", "-n", "bulk", "-o", "jsonpath={.data.v}")
	takeover := time.Since(killed)
	successor := fenceHolder(t, hub, "spoke-1")
	t.Logf("replica %s killed; spoke-1 taken over by %s, and the edit made at the kill delivered there %.1fs after it", victim, successor, takeover.Seconds())
	if successor == victim || replicas[successor] == nil {
		t.Errorf("spoke-1's fence is held by %q after the kill of %s", successor, victim)
	}
	for _, s := range fleet.Spokes()[1:] {
		eventuallyKubectl(t, s.KubeconfigPath(), "after-the-kill", "get", "configmap", "cm-000", "-n", "bulk", "-o", "jsonpath={.data.v}")
	}

	for _, s := range fleet.Spokes() {
		events, err := s.AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		var runs []string // the writers of the spoke's Flotilla writes, one entry per unbroken run
		for _, ev := range events {
			writer, _, _ := strings.Cut(strings.TrimPrefix(ev.UserAgent, "flotilla/"), " ")
			if !ev.Mutating() || !strings.HasPrefix(ev.UserAgent, "flotilla/") || replicas[writer] == nil {
				continue // not a replica's (flotilla join's own writes, for one)
			}
			if ev.Verb == "delete" {
				t.Errorf("%s: Flotilla deleted %s %s/%s", s.Name(), ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name)
			}
			if len(runs) == 0 || runs[len(runs)-1] != writer {
				runs = append(runs, writer)
			}
		}
		t.Logf("%s: writers in turn %v", s.Name(), runs)
		for i, w := range runs {
			if slices.Contains(runs[:i], w) {
				t.Errorf("%s: replicas wrote in turn %v: %s wrote again after another replica had", s.Name(), runs, w)
			}
		}
		if len(runs) == 0 {
			t.Errorf("%s: no writes by a replica in the audit log", s.Name())
		}
	}
}

// fenceHolder is the replica holding a cluster's fence Lease (package shard).
func fenceHolder(t *testing.T, hub client.Client, cluster string) string {
	t.Helper()
	var holder string
	fleettest.Eventually(t, 60*time.Second, "the fence Lease of "+cluster+" held", func() error {
		var l coordinationv1.Lease
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-" + cluster}, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		holder = *l.Spec.HolderIdentity
		return nil
	})
	return holder
}
