package localfleet

import (
	"fmt"
	"regexp"
	"time"
)

// Role says what a plane is for.
type Role string

const (
	// RoleHub is the plane Flotilla's own objects live on. Its kube-controller-manager runs only
	// the garbage-collector and namespace controllers.
	RoleHub Role = "hub"
	// RoleSpoke is a member cluster of the fleet.
	RoleSpoke Role = "spoke"
)

// Mode says how much of Kubernetes a spoke runs.
type Mode string

const (
	// ModeAPIOnly runs etcd and kube-apiserver only: objects are stored and watched, nothing
	// acts on them. Cheap (about 300 MB), for scale tests.
	ModeAPIOnly Mode = "api-only"
	// ModeFull adds kube-controller-manager, kube-scheduler and kwok with fake Nodes, so that
	// Deployments, StatefulSets and Jobs really progress and become Available.
	ModeFull Mode = "full"
)

// Capacity is what each fake Node of a full spoke reports as capacity and allocatable.
type Capacity struct {
	CPU    string // a resource quantity, e.g. "8"
	Memory string // a resource quantity, e.g. "32Gi"
	Pods   int
}

// DefaultNodeCapacity is the capacity of a fake Node when a spec leaves it empty.
var DefaultNodeCapacity = Capacity{CPU: "8", Memory: "32Gi", Pods: 110}

// PlaneSpec describes one plane of a fleet.
type PlaneSpec struct {
	// Name identifies the plane; it names its directory, kubeconfig and kubeconfig context.
	Name string
	Role Role
	// Mode applies to spokes; the hub is always API server plus its restricted controllers.
	Mode Mode
	// Labels describe the spoke (region, env, ...); they are put on its fake Nodes and are what
	// a registration of the spoke on the hub would carry.
	Labels map[string]string
	// Nodes is the number of fake Nodes of a full spoke (default 2).
	Nodes int
	// NodeCapacity is each fake Node's capacity (default DefaultNodeCapacity).
	NodeCapacity Capacity
	// PodReadyDelay is how long kwok lets a full spoke's Pods run before they are Ready (0: at
	// once), so that a rollout or a move takes real time, as on a cluster whose Pods start
	// slowly.
	PodReadyDelay time.Duration
	// AuditLog makes kube-apiserver write every request (metadata only) to an audit log, which
	// tests read with Plane.AuditEvents to count who wrote what.
	AuditLog bool
	// ExtraEtcdArgs are appended to etcd's command line (tests use it to lower limits).
	ExtraEtcdArgs []string
	// ExtraAPIServerArgs are appended to kube-apiserver's command line (tests use it for audit
	// logs or to provoke a failure).
	ExtraAPIServerArgs []string
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// withDefaults validates the spec and fills in defaults.
func (s PlaneSpec) withDefaults() (PlaneSpec, error) {
	if !dnsLabel.MatchString(s.Name) {
		return s, fmt.Errorf("plane name %q must be a DNS label (lower-case letters, digits and '-')", s.Name)
	}
	switch s.Role {
	case RoleHub:
		s.Mode = ModeAPIOnly
	case RoleSpoke:
		if s.Mode == "" {
			s.Mode = ModeAPIOnly
		}
		if s.Mode != ModeAPIOnly && s.Mode != ModeFull {
			return s, fmt.Errorf("plane %s: unknown mode %q (want %q or %q)", s.Name, s.Mode, ModeAPIOnly, ModeFull)
		}
	default:
		return s, fmt.Errorf("plane %s: unknown role %q (want %q or %q)", s.Name, s.Role, RoleHub, RoleSpoke)
	}
	if s.Mode == ModeFull {
		if s.Nodes == 0 {
			s.Nodes = 2
		}
		if s.Nodes < 0 || s.Nodes > 1000 {
			return s, fmt.Errorf("plane %s: nodes must be between 1 and 1000, got %d", s.Name, s.Nodes)
		}
		if s.NodeCapacity == (Capacity{}) {
			s.NodeCapacity = DefaultNodeCapacity
		}
	}
	return s, nil
}

// describe names the plane's kind for progress output: "hub", "api-only" or "full".
func (s PlaneSpec) describe() string {
	if s.Role == RoleHub {
		return string(RoleHub)
	}
	return string(s.Mode)
}
