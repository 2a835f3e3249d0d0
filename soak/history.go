package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// maxHistories bounds how many differing objects a failed convergence tells the history of.
const maxHistories = 5

// histories tells, for the first differences, every write the hub's and the differing spoke's
// audit logs show of the object since start: who asked for what, and what Flotilla did about
// it, which is where a convergence failure is understood.
func histories(hub *localfleet.Plane, spokes []*localfleet.Plane, diffs []difference, start time.Time) []string {
	byName := map[string]*localfleet.Plane{}
	for _, s := range spokes {
		byName[s.Name()] = s
	}
	// Each plane's audit log is read once, however many objects differ there.
	events := map[string][]localfleet.AuditEvent{}
	errs := map[string]error{}
	read := func(p *localfleet.Plane) ([]localfleet.AuditEvent, error) {
		if _, ok := events[p.Name()]; !ok && errs[p.Name()] == nil {
			events[p.Name()], errs[p.Name()] = p.AuditEvents()
		}
		return events[p.Name()], errs[p.Name()]
	}
	var out []string
	for i, d := range diffs {
		if i == maxHistories {
			break
		}
		resource, namespace, name, ok := splitObjKey(d.Object)
		if !ok || byName[d.Cluster] == nil {
			continue
		}
		line := fmt.Sprintf("history of %s on %s:", d.Object, d.Cluster)
		for _, p := range []*localfleet.Plane{hub, byName[d.Cluster]} {
			evs, err := read(p)
			writes := writesOf(evs, resource, namespace, name, start)
			if err != nil {
				writes = "audit log: " + err.Error()
			}
			line += fmt.Sprintf(" %s [%s]", p.Name(), writes)
		}
		out = append(out, line)
	}
	return out
}

// splitObjKey reads an objKey ("configmaps/soak/p0-cm-3", an instance's child with "@cluster").
func splitObjKey(k objKey) (resource, namespace, name string, ok bool) {
	s, _, _ := strings.Cut(string(k), "@")
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// writesOf lists the writes of one object in a plane's audit events since start: the time each was
// received, who sent it (flotilla, the soak, or another user agent), the verb and the answer.
func writesOf(events []localfleet.AuditEvent, resource, namespace, name string, start time.Time) string {
	var writes []string
	for _, ev := range events {
		r := ev.ObjectRef
		if !ev.Mutating() || ev.RequestReceivedTimestamp.Before(start) || r.Resource != resource || r.Namespace != namespace || r.Name != name {
			continue
		}
		who, _, _ := strings.Cut(ev.UserAgent, "/")
		writes = append(writes, fmt.Sprintf("%s %s %s %d", ev.RequestReceivedTimestamp.UTC().Format("15:04:05.000"), who, ev.Verb, ev.ResponseStatus.Code))
	}
	if len(writes) == 0 {
		return "no writes"
	}
	return strings.Join(writes, ", ")
}
