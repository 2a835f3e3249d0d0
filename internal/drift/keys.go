package drift

import "sort"

// sortedKeys are m's keys in order: a slice sized once (slices.Sorted(maps.Keys(m)) grows
// its slice as it goes: 2.6 times the allocations of a Compare, BenchmarkCompareDeployment).
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
