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
	records, err := PlacementRecords(ctx, hub, placement)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, d := range records {
		seen[d.Spec.Cluster] = true
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}

// PlacementRecords returns the Delivery records of the owners a Placement chose clusters for.
func PlacementRecords(ctx context.Context, hub client.Reader, placement client.ObjectKey) ([]flotillav1.Delivery, error) {
	var list flotillav1.DeliveryList
	if err := hub.List(ctx, &list, PlacementSelector(placement)); err != nil {
		return nil, fmt.Errorf("list the Delivery records of Placement %s: %w", placement, err)
	}
	return list.Items, nil
}

// PlacementSelector selects the Delivery records of the owners a Placement chose clusters for.
func PlacementSelector(placement client.ObjectKey) client.MatchingLabels {
	return client.MatchingLabels{labelPlacement: placementValue(placement)}
}
