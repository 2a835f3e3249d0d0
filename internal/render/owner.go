package render

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Owner identifies what delivers an object: a Propagation or ClusterPropagation, a hub object
// in transparent mode, or an object on a spoke (an instance of a fleet API), which delivers
// into its own cluster only.
type Owner struct {
	// Kind is Propagation, ClusterPropagation, a transparent-mode owner kind, or for a spoke
	// object its kind and API group ("Widget.example.dev"; a core kind has no group).
	Kind      string
	Namespace string // empty for a cluster-scoped owner
	Name      string
	// Cluster is the spoke the owner object lives on; empty for an owner on the hub.
	Cluster string
}

// String is the owner's full name, e.g. "Propagation/team-a/web", or for an owner on a spoke
// "Widget.example.dev/team-a/web@eu-1". Cluster names are DNS labels, so "@" is unambiguous.
func (o Owner) String() string {
	s := o.Kind + "/" + o.Name
	if o.Namespace != "" {
		s = o.Kind + "/" + o.Namespace + "/" + o.Name
	}
	if o.Cluster != "" {
		s += "@" + o.Cluster
	}
	return s
}

// OnSpoke reports whether the owner is an object on a spoke, which delivers into that cluster
// only.
func (o Owner) OnSpoke() bool { return o.Cluster != "" }

// LabelValue is a label-safe, fixed-length identifier of the owner.
func (o Owner) LabelValue() string {
	sum := sha256.Sum256([]byte(o.String()))
	return "o-" + hex.EncodeToString(sum[:])[:20]
}

// ParseOwner reads an owner from its String form.
func ParseOwner(s string) (Owner, bool) {
	var o Owner
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s, o.Cluster = s[:at], s[at+1:]
		if o.Cluster == "" {
			return Owner{}, false
		}
	}
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		o.Kind, o.Name = parts[0], parts[1]
	case 3:
		o.Kind, o.Namespace, o.Name = parts[0], parts[1], parts[2]
	default:
		return Owner{}, false
	}
	return o, true
}

// OwnerKind is a kind as Owner.Kind names it: the Kind, then its API group after a dot unless
// the group is core or home, the group whose kinds go by their Kind alone (Flotilla's own:
// "Propagation"; "Deployment.apps", "ConfigMap").
func OwnerKind(group, kind, home string) string {
	if group == "" || group == home {
		return kind
	}
	return kind + "." + group
}
