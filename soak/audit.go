package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// maxWritesPerChange bounds Flotilla's writes to the spokes per unit of work: each hub change
// on each spoke, and each spoke-side edit or deletion (one correction on one cluster), is one
// unit, which ideally costs one write. The bound leaves room for what a fault costs on top: a
// write retried after a frozen or restarted API server, a delivery repeated after the hub
// controller was killed before it recorded its result, the namespace and RoleBinding set up
// once per spoke.
const maxWritesPerChange = 3.0

// flotillaRequest reports whether an audit event is a request Flotilla's controller sent.
func flotillaRequest(ev localfleet.AuditEvent) bool {
	return strings.HasPrefix(ev.UserAgent, "flotilla")
}

// auditFigures is what the spokes' audit logs say Flotilla did from the soak's start.
type auditFigures struct {
	Writes           int             `json:"writes"`           // mutating requests answered 2xx
	WriteAttempts    int             `json:"writeAttempts"`    // every mutating request
	ByResource       map[string]int  `json:"writesByResource"` // successful writes by verb and resource
	Deletes          []spokeDelete   `json:"-"`
	InstanceWrites   []instanceWrite `json:"-"`                      // the soak's own instance creates and deletes
	OtherDeletes     []string        `json:"otherDeletes,omitempty"` // outside the soak's namespace or kinds
	RequestsAnswered int             `json:"requests"`
}

// readAudit collects Flotilla's writes and deletes on every spoke since start.
func readAudit(spokes []*localfleet.Plane, start time.Time) (auditFigures, error) {
	a := auditFigures{ByResource: map[string]int{}}
	for _, p := range spokes {
		events, err := p.AuditEvents()
		if err != nil {
			return a, fmt.Errorf("%s: audit log: %w", p.Name(), err)
		}
		for _, ev := range events {
			if ev.RequestReceivedTimestamp.Before(start) {
				continue
			}
			if r := ev.ObjectRef; ev.UserAgent == userAgent && r.Resource == soakAppGVR.Resource && r.Namespace == appsNS &&
				(ev.Verb == "create" || ev.Verb == "delete") && ev.ResponseStatus.Code >= 200 && ev.ResponseStatus.Code < 300 {
				a.InstanceWrites = append(a.InstanceWrites, instanceWrite{Cluster: p.Name(), Name: r.Name, Verb: ev.Verb,
					Received: ev.RequestReceivedTimestamp, Completed: ev.StageTimestamp})
			}
			if !flotillaRequest(ev) {
				continue
			}
			a.RequestsAnswered++
			if !ev.Mutating() {
				continue
			}
			a.WriteAttempts++
			ok := ev.ResponseStatus.Code >= 200 && ev.ResponseStatus.Code < 300
			if ok {
				a.Writes++
				a.ByResource[ev.Verb+" "+ev.ObjectRef.Resource]++
			}
			if ev.Verb != "delete" && ev.Verb != "deletecollection" {
				continue
			}
			r := ev.ObjectRef
			if (r.Namespace == ns || r.Namespace == appsNS) && (r.Resource == "configmaps" || r.Resource == "deployments") && ev.Verb == "delete" {
				key := objKey(r.Resource + "/" + r.Namespace + "/" + r.Name)
				if r.Namespace == appsNS {
					key += objKey("@" + p.Name()) // an instance's children are wanted per cluster
				}
				a.Deletes = append(a.Deletes, spokeDelete{Cluster: p.Name(), Object: key, At: ev.RequestReceivedTimestamp, Code: ev.ResponseStatus.Code})
				continue
			}
			a.OtherDeletes = append(a.OtherDeletes, fmt.Sprintf("%s: %s %s %s/%s (HTTP %d)", p.Name(), ev.Verb, r.Resource, r.Namespace, r.Name, ev.ResponseStatus.Code))
		}
	}
	sort.Slice(a.Deletes, func(i, j int) bool { return a.Deletes[i].At.Before(a.Deletes[j].At) })
	sort.Slice(a.InstanceWrites, func(i, j int) bool { return a.InstanceWrites[i].Received.Before(a.InstanceWrites[j].Received) })
	return a, nil
}
