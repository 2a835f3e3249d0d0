// Command stages prints the node and pod lifecycle stages of the kwok release pinned in this
// module, for the fake nodes of Flotilla's local fleets. kwok v0.8 no longer falls back to
// built-in stages when its configuration names none; `make tools` writes this output to
// bin/kwok-stages.yaml and every full spoke's kwok configuration includes it. Taking the
// stages from the kwok module itself keeps them in step with the kwok binary.
package main

import (
	"fmt"
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

func main() {
	stages := []string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeat,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	}
	for i, s := range stages {
		if i > 0 {
			fmt.Println("---")
		}
		fmt.Println(strings.TrimSpace(s))
	}
}
