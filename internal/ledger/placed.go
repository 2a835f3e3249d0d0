package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// labelPlacement on a record names (as a hash: namespace and name may not fit a label) the
// Placement that chose its cluster.
const labelPlacement = "flotilla.dev/placement-ref"

func placementValue(key client.ObjectKey) string {
	if key.Name == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key.Namespace + "/" + key.Name))
	return "p-" + hex.EncodeToString(sum[:])[:20]
}

// PlacedClusters returns, sorted, the clusters that hold objects of owners a Placement chose
// them for: the records say so, whatever the Placement's status says.
func PlacedClusters(ctx context.Context, hub client.Reader, placement client.ObjectKey) ([]string, error) {
	var list flotillav1.DeliveryList
	if err := hub.List(ctx, &list, client.MatchingLabels{labelPlacement: placementValue(placement)}); err != nil {
		return nil, fmt.Errorf("list the Delivery records of Placement %s: %w", placement, err)
	}
	seen := map[string]bool{}
	for _, d := range list.Items {
		seen[d.Spec.Cluster] = true
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}
