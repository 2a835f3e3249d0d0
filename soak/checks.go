package main

import (
	"fmt"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// auditChecks reads the spokes' audit logs: no wrongful delete, writes per change bounded.
func (r *report) auditChecks(spokes []*localfleet.Plane, start time.Time, edits *editStream) error {
	a, err := readAudit(spokes, start)
	if err != nil {
		return err
	}
	r.Audit, r.FlotillaDeletes = a, len(a.Deletes)
	edits.mu.Lock()
	recordInstances(edits.history, a.InstanceWrites)
	wrong := wrongfulDeletes(a.Deletes, edits.history)
	edits.mu.Unlock()
	c := check{Name: "no_wrong_deletes", Pass: len(wrong) == 0, Value: float64(len(wrong)),
		Bound: fmt.Sprintf("0 of Flotilla's %d deletes in namespaces %s and %s outside an interval the object was not wanted (+%s)", len(a.Deletes), ns, appsNS, staleness)}
	for _, w := range wrong {
		c.Detail = append(c.Detail, w.String())
	}
	r.add(c)
	units := r.HubChanges*len(spokes) + r.SpokeTouches + r.InstanceChanges*instanceChildren
	if units > 0 {
		r.WritesPerChange = float64(a.Writes) / float64(units)
	}
	r.add(check{Name: "writes_per_change", Pass: r.WritesPerChange <= maxWritesPerChange, Value: r.WritesPerChange,
		Bound: fmt.Sprintf("≤ %.1f: %d successful writes / (%d hub changes × %d spokes + %d spoke-side edits and deletions + %d instance changes × %d children)",
			maxWritesPerChange, a.Writes, r.HubChanges, len(spokes), r.SpokeTouches, r.InstanceChanges, instanceChildren),
		Detail: topResources(a.ByResource, 6)})
	return nil
}

// memoryChecks judges the hub controller's RSS samples.
func (r *report) memoryChecks(samples []rssSample) {
	r.RSSSamples = len(samples)
	for i, s := range samples {
		if i == 0 || mib(s.Bytes) < r.RSSMinMiB {
			r.RSSMinMiB = mib(s.Bytes)
		}
		r.RSSMaxMiB = max(r.RSSMaxMiB, mib(s.Bytes))
	}
	r.Memory = memoryFlat(samples)
	for _, v := range r.Memory {
		c := check{Name: fmt.Sprintf("memory_flat_%d", v.Replica), Pass: v.Pass, Value: v.LastThirdMiB,
			Bound: fmt.Sprintf("last third's median RSS ≤ first third's × %.2f + %d MiB, after %s of the last life", 1+memGrowthFactor, memGrowthSlack>>20, memWarmUp)}
		if v.Judged {
			c.Detail = []string{fmt.Sprintf("life %d of replica %d: %.0f s, %d samples after warm-up; first third %.1f MiB, last third %.1f MiB, limit %.1f MiB, peak %.1f MiB",
				v.Life, v.Replica, v.LifeSeconds, v.Samples, v.FirstThirdMiB, v.LastThirdMiB, v.LimitMiB, v.PeakMiB)}
		} else {
			c.Detail = []string{v.NotJudgedCause}
		}
		r.add(c)
	}
}

// topResources lists the most written resources, most first.
func topResources(by map[string]int, n int) []string {
	keys := sortedKeys(by)
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if by[keys[j]] > by[keys[i]] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	var out []string
	for i, k := range keys {
		if i == n {
			break
		}
		out = append(out, fmt.Sprintf("%s: %d", k, by[k]))
	}
	return out
}
