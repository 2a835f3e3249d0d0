package e2e

import (
	"fmt"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestReplicasFollowTheClustersRoom: three spokes whose kwok Nodes offer 4, 8 and 12 cpus. A
// Deployment of 12 one-cpu replicas divided by Capacity runs 2, 4 and 6 replicas, all Available;
// Packed puts all 12 on the biggest spoke, and 16 fill it and put the rest on the next biggest.
// Weighted evenly, 24 replicas ask 8 of every spoke: the pods the scheduler of the smaller spokes
// cannot place stay Unschedulable, and moves.unschedulableAfter places them on the others until
// every spoke runs what it has room for, 4, 8 and 12, all Available. A placement limit of 6 cpus
// on spoke-3 then holds 16 replicas to 4, 6 and 6.
func TestReplicasFollowTheClustersRoom(t *testing.T) {
	flotilla := buildFlotilla(t)
	spoke := func(name string, nodes int) localfleet.PlaneSpec {
		s := fleettest.FullSpoke(name, nil)
		s.Nodes, s.NodeCapacity = nodes, localfleet.Capacity{CPU: "4", Memory: "16Gi", Pods: 110}
		return s
	}
	fleet := fleettest.Start(t, fleettest.Hub(), spoke("spoke-1", 1), spoke("spoke-2", 2), spoke("spoke-3", 3))
	hubKC := fleet.Hub().KubeconfigPath()
	runFlotilla(t, flotilla, hubKC, "install", "--crds-only")
	runFlotillaHub(t, flotilla, hubKC)
	for _, name := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		runFlotilla(t, flotilla, hubKC, "join", name, "--kubeconfig", fleet.Plane(name).KubeconfigPath())
	}
	for name, cpu := range map[string]string{"spoke-1": "4", "spoke-2": "8", "spoke-3": "12"} {
		eventuallyKubectl(t, hubKC, cpu, "get", "cluster", name, "-o", "jsonpath={.status.allocatable.cpu}")
	}
	mustKubectl(t, hubKC, "apply", "-f", "testdata/room.yaml")
	available := func(want map[string]int) {
		t.Helper()
		for name, n := range want {
			eventuallyKubectl(t, fleet.Plane(name).KubeconfigPath(), fmt.Sprintf("%d/%d", n, n), "get", "deployment", "worker", "-n", "room",
				"-o", "jsonpath={.spec.replicas}/{.status.availableReplicas}")
		}
	}
	// Room for 4, 8 and 12 replicas of one cpu.
	available(map[string]int{"spoke-1": 2, "spoke-2": 4, "spoke-3": 6})

	mustKubectl(t, hubKC, "patch", "placement", "by-room", "-n", "room", "--type=merge", "-p", `{"spec":{"replicas":{"mode":"Packed"}}}`)
	available(map[string]int{"spoke-3": 12})
	eventuallyKubectl(t, fleet.Plane("spoke-1").KubeconfigPath(), "0", "get", "deployment", "worker", "-n", "room", "-o", "jsonpath={.spec.replicas}")
	eventuallyKubectl(t, fleet.Plane("spoke-2").KubeconfigPath(), "0", "get", "deployment", "worker", "-n", "room", "-o", "jsonpath={.spec.replicas}")

	mustKubectl(t, hubKC, "scale", "deployment", "worker", "-n", "room", "--replicas=16")
	available(map[string]int{"spoke-3": 12, "spoke-2": 4})

	mustKubectl(t, hubKC, "patch", "placement", "by-room", "-n", "room", "--type=merge",
		"-p", `{"spec":{"replicas":{"mode":"Weighted"},"moves":{"unschedulableAfter":"5s"}}}`)
	mustKubectl(t, hubKC, "scale", "deployment", "worker", "-n", "room", "--replicas=24")
	available(map[string]int{"spoke-1": 4, "spoke-2": 8, "spoke-3": 12})
	eventuallyKubectl(t, hubKC, "4", "get", "delivery", "-n", "room", "-l", "flotilla.dev/cluster=spoke-1",
		"-o", "jsonpath={.items[0].spec.replicas[0].fits}")

	// spoke-3 admits 6 cpus of Flotilla's placements: 16 replicas run 4 (what spoke-1 fits), 6
	// and 6, and the Cluster says what is placed against its limit.
	mustKubectl(t, hubKC, "patch", "cluster", "spoke-3", "--type=merge", "-p", `{"spec":{"placementLimits":{"cpu":"6"}}}`)
	mustKubectl(t, hubKC, "scale", "deployment", "worker", "-n", "room", "--replicas=16")
	available(map[string]int{"spoke-1": 4, "spoke-2": 6, "spoke-3": 6})
	eventuallyKubectl(t, hubKC, "6 6", "get", "cluster", "spoke-3", "-o", "jsonpath={.status.placed.cpu} {.spec.placementLimits.cpu}")
	eventuallyKubectl(t, hubKC, "Placed", "get", "fprop", "worker", "-n", "room", "-o", `jsonpath={.status.conditions[?(@.type=="ReplicasPlaced")].reason}`)
}
