package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// params are what a run is drawn from: the same params give the same schedule of faults and
// the same sequence of hub changes.
type params struct {
	Seed            uint64
	Duration        time.Duration
	Spokes          int
	HubReplicas     int
	Shard           bool
	EditEvery       time.Duration
	ConvergeTimeout time.Duration
	NoFleetAPIs     bool
}

// defaultEditEvery is the average time between two changes of the edit stream.
const defaultEditEvery = 700 * time.Millisecond

func main() {
	var p params
	var outDir, binDir string
	flag.Uint64Var(&p.Seed, "seed", uint64(time.Now().UnixNano()), "seed of the fault schedule and the hub edits; a report's seed replays its run (default: from the clock)")
	flag.DurationVar(&p.Duration, "duration", 10*time.Minute, "how long faults and hub edits go on; then the soak waits for convergence and checks")
	flag.IntVar(&p.Spokes, "spokes", 3, "number of API-only spokes")
	flag.BoolVar(&p.Shard, "shard", false, "run the hub replicas sharded (flotilla hub --shard): they divide the spokes, and a kill-hub fault takes a share of them over (needs --hub-replicas 2 or more)")
	flag.IntVar(&p.HubReplicas, "hub-replicas", 1, "number of `flotilla hub` processes (more than 1 run with leader election; a kill-hub fault kills one of them)")
	flag.DurationVar(&p.EditEvery, "edit-interval", defaultEditEvery, "average time between two hub changes")
	flag.DurationVar(&p.ConvergeTimeout, "converge-timeout", 5*time.Minute, "how long the fleet may take to converge once faults and edits stop")
	flag.BoolVar(&p.NoFleetAPIs, "no-fleet-apis", false, "leave out the fleet API (an RGD served by an APIPropagation) and its instances on the spokes")
	flag.StringVar(&outDir, "out", "soak/results", "directory for the JSON report")
	flag.StringVar(&binDir, "bin-dir", "", "directory with the Kubernetes binaries and flotilla (default: bin/)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: go run ./soak [flags]\n\n"+
			"Starts a local fleet and `flotilla hub`, injects seeded random faults while editing the hub,\n"+
			"then checks that every spoke holds what the hub says. Take the fleet lock first\n"+
			"(make soak does: flock /tmp/flotilla-fleet.lock). See docs/soak.md.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if p.Spokes < 1 || p.Spokes > 20 || p.HubReplicas < 1 || p.HubReplicas > 5 || p.Duration < 30*time.Second || p.EditEvery <= 0 {
		fmt.Fprintln(os.Stderr, "error: --spokes must be 1..20, --hub-replicas 1..5, --duration at least 30s, --edit-interval positive")
		os.Exit(2)
	}
	if binDir == "" {
		binDir = localfleet.FindBinDir()
	}
	if abs, err := filepath.Abs(binDir); err == nil {
		binDir = abs
	}
	fmt.Printf("soak: seed %d, %s, %d spokes, %d hub replica(s)\n", p.Seed, p.Duration, p.Spokes, p.HubReplicas)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := run(ctx, p, binDir)
	if r != nil {
		r.print(os.Stdout)
		path, werr := r.write(outDir)
		if werr != nil {
			fmt.Fprintf(os.Stderr, "error: write the report: %v\n", werr)
		} else {
			fmt.Printf("report written to %s\n", path)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\nreplay with: make soak SOAK=%s SOAK_ARGS=\"%s\"\n", err, p.Duration, replayArgs(p))
		os.Exit(1)
	}
	if failed := r.failed(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "soak failed: %d check(s) failed:", len(failed))
		for _, c := range failed {
			fmt.Fprintf(os.Stderr, " %s", c.Name)
		}
		fmt.Fprintf(os.Stderr, "\nreplay with: %s\n", r.Replay)
		os.Exit(1)
	}
}
