package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// divisionKey hashes the decisive inputs of a division: the mode and each candidate's name,
// tier, state, weight, min, max and limit. The total, the estimates and the unschedulable
// reports are left out: a new total is applied incrementally, and capacity numbers alone never
// move replicas. With spread, its constraints and each candidate's values of their topology
// keys join it (other labels do not); without, the key is what it was before spread existed.
func divisionKey(in DivideInput) string {
	cs := append([]Candidate(nil), in.Clusters...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	var sb strings.Builder
	fmt.Fprintf(&sb, "v1\x00%s\n", modeOf(in.Mode))
	for _, sc := range in.Spread {
		fmt.Fprintf(&sb, "spread %q %d %d %t\n", sc.TopologyKey, sc.maxSkew(), sc.minDomains(), sc.strict())
	}
	for _, c := range cs {
		fmt.Fprintf(&sb, "%q %d %s %d %d %d %d", c.Name, c.Tier, stateOf(c.State),
			c.Weight, max(c.Min, 0), max(c.Max, Unbounded), max(c.LimitFit, Unbounded))
		for _, sc := range in.Spread {
			if v, ok := c.Labels[sc.TopologyKey]; ok {
				fmt.Fprintf(&sb, " %q", v)
			} else {
				sb.WriteString(" -")
			}
		}
		sb.WriteString("\n")
	}
	sum := sha256.Sum256([]byte(sb.String()))
	return hex.EncodeToString(sum[:12])
}

// tieHash is a candidate's stable pseudo-random position for a workload: ties between
// candidates go to the lower hash, so remainders do not pile on alphabetically first names.
func tieHash(seed, cluster string) uint64 {
	sum := sha256.Sum256([]byte(seed + "/" + cluster))
	return binary.BigEndian.Uint64(sum[:8])
}

func modeOf(m ReplicaMode) ReplicaMode {
	if m == "" {
		return ModeWeighted
	}
	return m
}

func stateOf(s DecisionState) DecisionState {
	if s == "" {
		return StateActive
	}
	return s
}
