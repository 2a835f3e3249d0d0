package scheduler

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// pickN keeps at most n of the eligible clusters: those of earlier tiers first, then those
// chosen before (sticky), then the ones with the most allocatable CPU, then by a hash of seed and the cluster's name, so that
// equal clusters are not chosen by their names' order.
func pickN(eligible []string, clusters []flotillav1.Cluster, tiers []flotillav1.ClusterTier, wasChosen map[string]bool, n int, seed string) []string {
	if len(eligible) <= n {
		return eligible
	}
	cpu := make(map[string]int64, len(clusters))
	tier := make(map[string]int, len(clusters))
	for i := range clusters {
		tier[clusters[i].Name], _ = TierOf(tiers, clusters[i].Name, clusters[i].Labels)
		if q, ok := clusters[i].Status.Allocatable[corev1.ResourceCPU]; ok {
			cpu[clusters[i].Name] = q.MilliValue()
		}
	}
	ranked := append([]string(nil), eligible...)
	sort.Slice(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		if tier[a] != tier[b] {
			return tier[a] < tier[b]
		}
		if wasChosen[a] != wasChosen[b] {
			return wasChosen[a]
		}
		if cpu[a] != cpu[b] {
			return cpu[a] > cpu[b]
		}
		if ha, hb := tieHash(seed, a), tieHash(seed, b); ha != hb {
			return ha < hb
		}
		return a < b
	})
	return ranked[:n]
}
