package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"
)

// scenario is one measured figure, Flotilla's and the direct client's.
type scenario struct {
	Name     string   `json:"name"`
	Unit     string   `json:"unit"`
	Flotilla *float64 `json:"flotilla"`
	Baseline *float64 `json:"baseline"`
	Ratio    *float64 `json:"ratio"`
	Note     string   `json:"note,omitempty"`
}

type report struct {
	Date    string `json:"date"`
	Machine struct {
		Cores       int    `json:"cores"`
		MemoryBytes uint64 `json:"memoryBytes"`
	} `json:"machine"`
	Params    params     `json:"params"`
	Scenarios []scenario `json:"scenarios"`
	// Scale is the scale scenario's table, when it ran.
	Scale *scaleTable `json:"scale,omitempty"`
}

func newReport(p params) *report {
	r := &report{Date: time.Now().UTC().Format(time.RFC3339), Params: p}
	r.Machine.Cores = runtime.NumCPU()
	r.Machine.MemoryBytes = memTotal()
	return r
}

func f(v float64) *float64 { return &v }

// add records a scenario; the ratio is computed when both figures exist.
func (r *report) add(name, unit string, flotilla, baseline *float64, note string) {
	s := scenario{Name: name, Unit: unit, Flotilla: flotilla, Baseline: baseline, Note: note}
	if flotilla != nil && baseline != nil && *baseline != 0 {
		s.Ratio = f(*flotilla / *baseline)
	}
	r.Scenarios = append(r.Scenarios, s)
}

func (r *report) print(w io.Writer) {
	if len(r.Scenarios) == 0 && r.Scale != nil { // --only scale
		r.Scale.print(w)
		return
	}
	fmt.Fprintf(w, "\nFlotilla benchmark, %s, %d cores, %.1f GiB, %d spokes × %d objects of %d bytes\n\n",
		r.Date, r.Machine.Cores, float64(r.Machine.MemoryBytes)/(1<<30), r.Params.Spokes, r.Params.Objects, r.Params.ObjectSize)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tUNIT\tFLOTILLA\tBASELINE\tRATIO\tNOTE")
	show := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.3g", *v)
	}
	for _, s := range r.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Unit, show(s.Flotilla), show(s.Baseline), show(s.Ratio), s.Note)
	}
	_ = tw.Flush()
	if r.Scale != nil {
		r.Scale.print(w)
	}
}

func (r *report) write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
