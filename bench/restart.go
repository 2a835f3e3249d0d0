package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// restart: the hub controller restarts with the fleet converged (every spoke has every object)
// and a hub edit is made as the new process starts. restart_ready is the seconds from the
// start until the edit is on every spoke (target ≤ 20 s); restart_writes counts Flotilla's
// writes to the spokes meanwhile beyond the edited object (target 0: a restart re-reads, it
// does not re-write).
func (b *bench) restart(ctx context.Context, r *report) error {
	if err := b.waitApplied(ctx); err != nil {
		return err
	}
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return err
	}
	a, err := watchArrivals(ctx, b.spokes, ns, selector, hasVersion("restart"))
	if err != nil {
		return err
	}
	b.proc.stop()
	start := time.Now()
	proc, err := startHub(b.binDir, b.hubKC, b.hubArgs()...)
	if err != nil {
		return err
	}
	b.proc = proc
	if err := applyRange(ctx, hubCS, ns, b.p, "restart", 1); err != nil {
		return err
	}
	if err := a.wait(1, deliveryTimeout); err != nil {
		return err
	}
	ready := time.Since(start).Seconds()
	spokeWrites, hubWrites := 0, 0
	var examples []string
	for _, p := range b.measuredPlanes() {
		events, err := p.AuditEvents()
		if err != nil {
			return err
		}
		for _, ev := range events {
			if ev.StageTimestamp.Before(start) || !ev.Mutating() || !strings.HasPrefix(ev.UserAgent, "flotilla") {
				continue
			}
			if p == b.fleet.Hub() {
				hubWrites++
				continue
			}
			if ev.ObjectRef.Name == "cm-00000" {
				continue // the edit itself
			}
			spokeWrites++
			if len(examples) < 3 {
				examples = append(examples, fmt.Sprintf("%s %s %s/%s on %s", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name, p.Name()))
			}
		}
	}
	r.add("restart_ready", "s", f(ready), nil, fmt.Sprintf("hub restart with %d spokes × %d objects converged, until a hub edit is on every spoke; target ≤ 20", b.p.Spokes, b.p.Objects))
	note := fmt.Sprintf("writes to spokes beyond the edit, from the restart until the edit arrived; target 0 (hub: %d writes, the edit's status and records)", hubWrites)
	if len(examples) > 0 {
		note += "; e.g. " + strings.Join(examples, ", ")
	}
	r.add("restart_writes", "requests", f(float64(spokeWrites)), nil, note)
	return nil
}
