package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// check is one end-of-run check: pass or fail, its figure and bound, and what differed.
type check struct {
	Name   string   `json:"name"`
	Pass   bool     `json:"pass"`
	Value  float64  `json:"value"`
	Bound  string   `json:"bound"`
	Detail []string `json:"detail,omitempty"`
}

type report struct {
	Date            string            `json:"date"`
	Cores           int               `json:"cores"`
	Seed            uint64            `json:"seed"`
	Replay          string            `json:"replay"`
	DurationSeconds float64           `json:"durationSeconds"`
	Spokes          int               `json:"spokes"`
	HubReplicas     int               `json:"hubReplicas"`
	Shard           bool              `json:"shard"`
	Faults          map[faultKind]int `json:"faults"`
	FaultsSkipped   map[faultKind]int `json:"faultsSkipped,omitempty"`
	Schedule        []fault           `json:"schedule"`
	HubChanges      int               `json:"hubChanges"`
	HubChangesBy    map[string]int    `json:"hubChangesByKind"`
	HubEditErrors   []string          `json:"hubEditErrors,omitempty"`
	HubEditsSkipped int               `json:"hubEditsSkipped"`
	SpokeTouches    int               `json:"spokeTouches"`
	// InstanceChanges are the fleet API instance changes made on the spokes.
	InstanceChanges        int            `json:"instanceChanges"`
	InstanceChangesBy      map[string]int `json:"instanceChangesByKind,omitempty"`
	InstanceChangesSkipped int            `json:"instanceChangesSkipped"`
	Converged              bool           `json:"converged"`
	ConvergeSeconds        float64        `json:"convergenceSeconds"`
	ObjectsCompared        int            `json:"objectsCompared"` // objects the hub wants, over all spokes, found as it says
	Audit                  auditFigures   `json:"audit"`
	FlotillaDeletes        int            `json:"flotillaDeletes"`
	WritesPerChange        float64        `json:"writesPerChange"`
	Memory                 []memVerdict   `json:"memory"`
	RSSSamples             int            `json:"rssSamples"`
	RSSMinMiB              float64        `json:"rssMinMiB"`
	RSSMaxMiB              float64        `json:"rssMaxMiB"`
	Checks                 []check        `json:"checks"`
	FleetDir               string         `json:"fleetDir,omitempty"`
}

func (r *report) add(c check) { r.Checks = append(r.Checks, c) }

// failed returns the checks that failed.
func (r *report) failed() []check {
	var out []check
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nFlotilla soak, %s, %d cores: %.0f s, seed %d, %d spokes, %d hub replica(s)\n", r.Date, r.Cores, r.DurationSeconds, r.Seed, r.Spokes, r.HubReplicas)
	fmt.Fprintf(w, "faults: %v (skipped: %v)\n", r.Faults, r.FaultsSkipped)
	fmt.Fprintf(w, "hub changes: %d %v; spoke-side edits and deletions: %d\n", r.HubChanges, r.HubChangesBy, r.SpokeTouches)
	fmt.Fprintf(w, "fleet API instance changes on spokes: %d %v (%d not taken by a frozen or restarting spoke)\n", r.InstanceChanges, r.InstanceChangesBy, r.InstanceChangesSkipped)
	fmt.Fprintf(w, "converged: %t after %.1f s (%d objects compared); Flotilla's spoke writes %d (attempts %d), deletes %d, writes per change %.2f\n",
		r.Converged, r.ConvergeSeconds, r.ObjectsCompared, r.Audit.Writes, r.Audit.WriteAttempts, r.FlotillaDeletes, r.WritesPerChange)
	fmt.Fprintf(w, "hub controller RSS: %d samples, %.0f..%.0f MiB\n", r.RSSSamples, r.RSSMinMiB, r.RSSMaxMiB)
	for _, c := range r.Checks {
		verdict := "PASS"
		if !c.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %-16s %8.3g  (%s)\n", verdict, c.Name, c.Value, c.Bound)
		for i, d := range c.Detail {
			if i == 20 {
				fmt.Fprintf(w, "        ... and %d more (see the report)\n", len(c.Detail)-20)
				break
			}
			fmt.Fprintf(w, "        %s\n", d)
		}
	}
	fmt.Fprintf(w, "replay: %s\n", r.Replay)
}

func (r *report) write(dir string) (string, error) {
	path := filepath.Join(dir, time.Now().UTC().Format("20060102T150405Z")+".json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

func newReport(p params) *report {
	return &report{Date: time.Now().UTC().Format(time.RFC3339), Cores: runtime.NumCPU(), Seed: p.Seed, Spokes: p.Spokes, HubReplicas: p.HubReplicas, Shard: p.Shard,
		Replay: fmt.Sprintf("make soak SOAK=%s SOAK_ARGS=\"%s\"", p.Duration, replayArgs(p))}
}

// replayArgs are the flags that draw the same run again.
func replayArgs(p params) string {
	args := fmt.Sprintf("--seed %d --spokes %d", p.Seed, p.Spokes)
	if p.HubReplicas != 1 {
		args += fmt.Sprintf(" --hub-replicas %d", p.HubReplicas)
	}
	if p.Shard {
		args += " --shard"
	}
	if p.EditEvery != defaultEditEvery {
		args += fmt.Sprintf(" --edit-interval %s", p.EditEvery)
	}
	if p.NoFleetAPIs {
		args += " --no-fleet-apis"
	}
	return args
}
