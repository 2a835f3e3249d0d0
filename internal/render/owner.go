package render

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Owner identifies the Propagation or ClusterPropagation that delivers an object.
type Owner struct {
	Kind      string // Propagation or ClusterPropagation
	Namespace string // empty for a ClusterPropagation
	Name      string
}

// String is the owner's full name, e.g. "Propagation/team-a/web".
func (o Owner) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// LabelValue is a label-safe, fixed-length identifier of the owner.
func (o Owner) LabelValue() string {
	sum := sha256.Sum256([]byte(o.String()))
	return "o-" + hex.EncodeToString(sum[:])[:20]
}

// ParseOwner reads an owner from its String form.
func ParseOwner(s string) (Owner, bool) {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		return Owner{Kind: parts[0], Name: parts[1]}, true
	case 3:
		return Owner{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, true
	}
	return Owner{}, false
}
