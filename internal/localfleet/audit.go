package localfleet

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"
)

// auditPolicy records every request at Metadata level once it completes: who, what verb, on
// which object, from which user agent. Writes of Flotilla's Cluster status are recorded with
// their bodies too: they are rare, and a test that finds one too many can then say what it
// changed.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Request
  verbs: ["patch", "update"]
  resources:
  - group: flotilla.dev
    resources: ["clusters/status"]
- level: Metadata
`

func (p *Plane) auditPolicyPath() string { return filepath.Join(p.dir, "audit-policy.yaml") }

// AuditLogPath is where the API server writes its audit log when PlaneSpec.AuditLog is set.
func (p *Plane) AuditLogPath() string { return filepath.Join(p.dir, "audit.log") }

// AuditEvent is one request recorded in a plane's audit log.
type AuditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	// ImpersonatedUser is who the request acted as, when User impersonated someone.
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser,omitempty"`
	ObjectRef struct {
		APIGroup  string `json:"apiGroup"`
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	RequestURI string `json:"requestURI"`
	// RequestObject is the request's body, for the requests the policy records it of.
	RequestObject  json.RawMessage `json:"requestObject,omitempty"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
}

// Latency is how long the API server took to answer: from receiving the request to completing
// the response (the stage every event of the policy records).
func (e AuditEvent) Latency() time.Duration { return e.StageTimestamp.Sub(e.RequestReceivedTimestamp) }

// Mutating reports whether the request could change state. Access and token reviews are
// creates that store nothing (questions to the authorizer or authenticator), so they are not.
func (e AuditEvent) Mutating() bool {
	if g := e.ObjectRef.APIGroup; g == "authorization.k8s.io" || g == "authentication.k8s.io" {
		return false
	}
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// AuditEvents returns the events recorded so far, oldest first: since the plane was last
// marked clean or reset, if it was.
func (p *Plane) AuditEvents() ([]AuditEvent, error) {
	from := p.auditFrom.Load()
	f, err := os.Open(p.AuditLogPath())
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	var out []AuditEvent
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			continue // a line being written
		}
		out = append(out, e)
	}
	return out, scanner.Err()
}
