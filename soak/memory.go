package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Memory flatness bounds: after memWarmUp of a controller process's life, the median RSS of
// the last third of its samples may exceed the median of the first third by at most
// memGrowthFactor times it plus memGrowthSlack. A leak of a few MiB a minute fails a
// 10-minute run; the garbage collector's swings do not.
const (
	memWarmUp       = 30 * time.Second
	memGrowthFactor = 0.25
	memGrowthSlack  = 24 << 20
	// memMinSamples is the fewest samples after warm-up for the check to judge a process.
	memMinSamples = 15
	sampleEvery   = 2 * time.Second
)

// rssSample is one reading of a hub controller process's resident memory.
type rssSample struct {
	Replica int       `json:"replica"`
	Life    int       `json:"life"` // how many times the replica had been started before this process
	At      time.Time `json:"at"`
	Bytes   uint64    `json:"bytes"`
}

// memVerdict is the flatness check's result for one process life.
type memVerdict struct {
	Replica        int     `json:"replica"`
	Life           int     `json:"life"`
	LifeSeconds    float64 `json:"lifeSeconds"`
	Samples        int     `json:"samples"`
	FirstThirdMiB  float64 `json:"firstThirdMedianMiB"`
	LastThirdMiB   float64 `json:"lastThirdMedianMiB"`
	PeakMiB        float64 `json:"peakMiB"`
	LimitMiB       float64 `json:"limitMiB"`
	Pass           bool    `json:"pass"`
	Judged         bool    `json:"judged"`
	NotJudgedCause string  `json:"notJudgedCause,omitempty"`
}

// memoryFlat judges, for each replica, its last process life (a restart resets its memory,
// and the soak's schedule kills the hub only in the first half of the run so that the last
// life is long): samples after memWarmUp, the last third's median against the first third's.
func memoryFlat(samples []rssSample) []memVerdict {
	last := map[int]int{}
	for _, s := range samples {
		if s.Life >= last[s.Replica] {
			last[s.Replica] = s.Life
		}
	}
	var out []memVerdict
	for _, replica := range sortedInts(last) {
		var life []rssSample
		for _, s := range samples {
			if s.Replica == replica && s.Life == last[replica] {
				life = append(life, s)
			}
		}
		v := memVerdict{Replica: replica, Life: last[replica]}
		if len(life) == 0 {
			continue
		}
		v.LifeSeconds = life[len(life)-1].At.Sub(life[0].At).Seconds()
		var after []uint64
		for _, s := range life {
			v.PeakMiB = max(v.PeakMiB, mib(s.Bytes))
			if s.At.Sub(life[0].At) >= memWarmUp {
				after = append(after, s.Bytes)
			}
		}
		v.Samples = len(after)
		if len(after) < memMinSamples {
			v.Pass, v.NotJudgedCause = true, fmt.Sprintf("only %d samples after the %s warm-up (need %d): the run is too short to judge", len(after), memWarmUp, memMinSamples)
			out = append(out, v)
			continue
		}
		third := len(after) / 3
		first, lastThird := median(after[:third]), median(after[len(after)-third:])
		limit := first + first*memGrowthFactor + memGrowthSlack
		v.Judged = true
		v.FirstThirdMiB, v.LastThirdMiB, v.LimitMiB = mib(uint64(first)), mib(uint64(lastThird)), mib(uint64(limit))
		v.Pass = lastThird <= limit
		out = append(out, v)
	}
	return out
}

func median(v []uint64) float64 {
	s := append([]uint64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return (float64(s[len(s)/2-1]) + float64(s[len(s)/2])) / 2
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func sortedInts(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// rssBytes reads VmRSS from /proc/<pid>/status (0 when the process is gone).
func rssBytes(pid int) uint64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kib, _ := strconv.ParseUint(fields[0], 10, 64)
				return kib * 1024
			}
		}
	}
	return 0
}
