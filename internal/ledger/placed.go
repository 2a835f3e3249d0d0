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
// them for: the records say so, whatever the Placement's status says. Records trust does not
// believe for that Placement are returned apart.
func PlacedClusters(ctx context.Context, trust Trust, placement client.ObjectKey) ([]string, []Ignored, error) {
	records, ignored, err := PlacementRecords(ctx, trust, placement)
	if err != nil {
		return nil, nil, err
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
	return out, ignored, nil
}

// PlacementRecords returns the Delivery records of the owners a Placement chose clusters for:
// those labelled for it that the ledger wrote for a live owner naming it (Trust). Those Trust
// refuses are returned apart, with why; those whose owner names another Placement now are left
// out.
func PlacementRecords(ctx context.Context, trust Trust, placement client.ObjectKey) ([]flotillav1.Delivery, []Ignored, error) {
	var list flotillav1.DeliveryList
	if err := trust.Hub.List(ctx, &list, PlacementSelector(placement)); err != nil {
		return nil, nil, fmt.Errorf("list the Delivery records of Placement %s: %w", placement, err)
	}
	out := make([]flotillav1.Delivery, 0, len(list.Items))
	var ignored []Ignored
	for i := range list.Items {
		names, reason, err := trust.Check(ctx, &list.Items[i])
		if err != nil {
			return nil, nil, err
		}
		switch {
		case reason != "":
			ignored = append(ignored, Ignored{Record: client.ObjectKeyFromObject(&list.Items[i]), Reason: reason})
		case names == placement:
			out = append(out, list.Items[i])
		}
		// else the owner names another Placement now: its record follows when it is next
		// written, or goes with the owner's objects.
	}
	untrustedRecords.WithLabelValues(ReaderPlacement).Add(float64(len(ignored)))
	return out, ignored, nil
}

// PlacementSelector selects the Delivery records of the owners a Placement chose clusters for.
func PlacementSelector(placement client.ObjectKey) client.MatchingLabels {
	return client.MatchingLabels{labelPlacement: placementValue(placement)}
}

// LabelPlacementRef is the label a record names its Placement with (PlacementLabelValue).
const LabelPlacementRef = labelPlacement

// PlacementLabelValue is the value of LabelPlacementRef on the records of owners a Placement
// chose clusters for: readers (the dashboard) find a record's Placement by it.
func PlacementLabelValue(key client.ObjectKey) string { return placementValue(key) }
