package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"
)

// Divide splits total replicas of a workload over clusters as evenly as whole replicas allow:
// each gets total/n, and total%n of them one more. Which ones get the one more is sticky and
// has no name bias: clusters that run more than total/n now (current) keep their extra
// replica first, and the rest is decided by a stable hash of seed (the workload) and the
// cluster's name, so the remainders of different workloads land on different clusters instead
// of always on the alphabetically first. It is pure.
func Divide(total int64, clusters []string, current map[string]int64, seed string) map[string]int64 {
	out := make(map[string]int64, len(clusters))
	n := int64(len(clusters))
	if n == 0 || total <= 0 {
		for _, c := range clusters {
			out[c] = 0
		}
		return out
	}
	base, rest := total/n, total%n
	ranked := append([]string(nil), clusters...)
	sort.Slice(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		if ha, hb := current[a] > base, current[b] > base; ha != hb {
			return ha
		}
		if ka, kb := rank(seed, a), rank(seed, b); ka != kb {
			return ka < kb
		}
		return a < b
	})
	for i, c := range ranked {
		out[c] = base
		if int64(i) < rest {
			out[c]++
		}
	}
	return out
}

// rank is a cluster's stable pseudo-random position for a workload.
func rank(seed, cluster string) uint64 {
	sum := sha256.Sum256([]byte(seed + "\x00" + cluster))
	return binary.BigEndian.Uint64(sum[:8])
}
