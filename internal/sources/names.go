package sources

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// flotillaPrefix marks labels only Flotilla sets. A source never sets them on a Cluster: a
// source that could set flotilla.dev/cluster-id could hide a duplicate, and one that could set
// flotilla.dev/source could claim a Cluster it did not import.
const flotillaPrefix = "flotilla.dev/"

// clusterName turns the name a source gives a cluster into a Cluster name. A Cluster name is
// a DNS-1123 label (it is used as a label value, see membership.ValidateName); a name that
// already is one is kept, any other is lowercased, stripped to letters, digits and '-', and
// given a short hash of the original so that two names that differ only in what was stripped
// stay apart (a GKE Fleet membership "proj_us-east1_prod" becomes "proj-us-east1-prod-1a2b3c").
func clusterName(source string) string {
	if len(validation.IsDNS1123Label(source)) == 0 {
		return source
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(source) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	sum := sha256.Sum256([]byte(source))
	suffix := hex.EncodeToString(sum[:])[:6]
	base := strings.Trim(b.String(), "-")
	if max := validation.DNS1123LabelMaxLength - len(suffix) - 1; len(base) > max {
		base = strings.Trim(base[:max], "-")
	}
	if base == "" {
		return "cluster-" + suffix
	}
	return base + "-" + suffix
}

// carryLabels returns the labels of a source object that become labels of its Cluster: every
// valid label except Flotilla's own and those the source's convention uses for itself (drop
// says which).
func carryLabels(labels map[string]string, drop func(key string) bool) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if strings.HasPrefix(k, flotillaPrefix) || (drop != nil && drop(k)) || !validLabel(k, v) {
			continue
		}
		out[k] = v
	}
	return out
}

// validLabel reports whether k=v may be a label.
func validLabel(k, v string) bool {
	return len(validation.IsQualifiedName(k)) == 0 && len(validation.IsValidLabelValue(v)) == 0
}
