package ownerkinds

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultAdminNamespace is where the Placements of cluster-wide owners (ClusterPropagations,
// APIPropagations) live unless the hub is told otherwise: the controller's own namespace, which
// only cluster administrators write to.
const DefaultAdminNamespace = "flotilla-system"

// AdminPlacement says why owner (a cluster-wide owner, "a ClusterPropagation") may not use a
// Placement of namespace, or "". Whoever may edit its Placement steers where what it delivers
// goes, or empties it, so only a Placement in an admin namespace (admin; empty:
// DefaultAdminNamespace) will do.
func AdminPlacement(owner, namespace string, admin []string) string {
	if len(admin) == 0 {
		admin = []string{DefaultAdminNamespace}
	}
	if slices.Contains(admin, namespace) {
		return ""
	}
	return fmt.Sprintf("placementRef.namespace %q is not an admin namespace (%s): %s may use only Placements that cluster administrators control; move the Placement, or start the hub with --admin-namespace=%s if only administrators write there",
		namespace, strings.Join(admin, ", "), owner, namespace)
}
