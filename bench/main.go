package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

type params struct {
	Spokes     int `json:"spokes"`
	Objects    int `json:"objects"`
	ObjectSize int `json:"objectSize"`
}

func main() {
	var p params
	var outDir, binDir, docs, profileDir, only, scaleSteps string
	flag.IntVar(&p.Spokes, "spokes", 10, "number of API-only spokes")
	flag.IntVar(&p.Objects, "objects", 1000, "number of ConfigMaps to propagate")
	flag.IntVar(&p.ObjectSize, "object-size", 256, "bytes of data per ConfigMap")
	flag.StringVar(&outDir, "out", "bench/results", "directory for the JSON results")
	flag.StringVar(&binDir, "bin-dir", "", "directory with the Kubernetes binaries and flotilla (default: bin/)")
	flag.StringVar(&profileDir, "profile", "", "write to this directory CPU profiles of the hub controller in the bulk, update and drift scenarios, heap profiles of the hub before and after bulk (their difference is what heap_per_pair counts), and 10 s CPU profiles of the first spoke's API server while Flotilla and then the direct client write to it")
	flag.StringVar(&only, "only", "", "run only these scenarios, comma-separated, from "+strings.Join(stepNames, ",")+"; bulk runs first unless only "+strings.Join(standalone, ",")+" is chosen (the docs table is then left alone); "+strings.Join(optIn, ",")+" runs only when named here")
	flag.StringVar(&scaleSteps, "scale-steps", "1,10,30", "the scale scenario's fleet sizes, comma-separated numbers of spokes (1..50), each a fleet of its own with --objects per spoke")
	flag.StringVar(&docs, "update-docs", "", "replace the table between the bench markers of this Markdown file with this run's")
	flag.Parse()
	if p.Spokes < 1 || p.Spokes > 50 || p.Objects < 1 || p.Objects > 100000 || p.ObjectSize < 1 || p.ObjectSize > 512*1024 {
		fmt.Fprintln(os.Stderr, "error: --spokes must be 1..50, --objects 1..100000, --object-size 1..524288")
		os.Exit(2)
	}
	steps, err := selectSteps(only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	sizes, err := parseScaleSteps(scaleSteps)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	if only != "" {
		docs = "" // a partial table never replaces the full one
	}
	if binDir == "" {
		binDir = localfleet.FindBinDir()
	}
	if abs, err := filepath.Abs(binDir); err == nil {
		binDir = abs // the planes run in their own directories
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := run(ctx, p, steps, binDir, profileDir, sizes)
	if err != nil {
		if r != nil && len(r.Scenarios) > 0 {
			fmt.Println("\nthe scenarios before the one that failed:")
			r.print(os.Stdout)
		}
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	r.print(os.Stdout)
	path := filepath.Join(outDir, time.Now().UTC().Format("20060102T150405Z")+".json")
	if err := r.write(path); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("\nresults written to %s\n", path)
	if docs != "" {
		if err := r.updateDocs(docs, os.Args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("table updated in %s\n", docs)
	}
}

// parseScaleSteps parses --scale-steps: distinct, increasing numbers of spokes, 1..50.
func parseScaleSteps(list string) ([]int, error) {
	var sizes []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 || n > 50 {
			return nil, fmt.Errorf("--scale-steps: %q is not a number of spokes from 1 to 50", field)
		}
		if len(sizes) > 0 && n <= sizes[len(sizes)-1] {
			return nil, fmt.Errorf("--scale-steps: give increasing sizes, e.g. 1,10,30 (got %q)", list)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
