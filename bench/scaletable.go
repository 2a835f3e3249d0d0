package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// scaleTable is the scale scenario's result: one row per measured figure, its value at each
// step, and how it grows per added cluster.
type scaleTable struct {
	Steps   []int      `json:"steps"`
	Objects int        `json:"objectsPerSpoke"`
	Fit     string     `json:"fit"`
	Rows    []scaleRow `json:"rows"`
}

// scaleRow is one figure of the scale table.
type scaleRow struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"`
	// Slope is the least-squares growth per added cluster; Intercept is the fit's value at 0
	// clusters. Both are absent with a single step.
	Slope     *float64 `json:"slopePerCluster,omitempty"`
	Intercept *float64 `json:"intercept,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// scaleFigures names the figures of a step, in the table's order.
var scaleFigures = []struct {
	name, unit, note string
	value            func(scaleStep) float64
}{
	{"fleet_start", "s", "starting the hub and the spokes (not Flotilla)", func(s scaleStep) float64 { return s.fleetStart }},
	{"idle_rss", "MiB", "hub controller RSS, Clusters Ready, nothing placed", func(s scaleStep) float64 { return s.idleRSS }},
	{"idle_heap", "MiB", "its live Go heap then (after a forced collection)", func(s scaleStep) float64 { return s.idleHeap }},
	{"bulk", "s", "every object onto every spoke, watched", func(s scaleStep) float64 { return s.bulk }},
	{"bulk_cpu", "CPU-s", "hub controller CPU, until the Propagation's status settled", func(s scaleStep) float64 { return s.bulkCPU }},
	{"peak_rss", "MiB", "hub controller VmHWM after bulk", func(s scaleStep) float64 { return s.peakRSS }},
	{"steady_rss", "MiB", "hub controller RSS once converged", func(s scaleStep) float64 { return s.steadyRSS }},
	{"live_heap", "MiB", "its live Go heap then", func(s scaleStep) float64 { return s.liveHeap }},
	{"goroutines", "count", "the hub controller's goroutines once converged", func(s scaleStep) float64 { return s.goroutines }},
	{"bulk_hub_writes", "requests", "Flotilla's writes to the hub API server for bulk (audit log)", func(s scaleStep) float64 { return s.bulkHubWrites }},
	{"bulk_spoke_writes", "requests", "Flotilla's writes to all spokes for bulk (audit logs)", func(s scaleStep) float64 { return s.bulkSpokeWrites }},
	{"update_p50", "ms", "hub edit → last spoke's watch", func(s scaleStep) float64 { return s.updateP50 }},
	{"update_p99", "ms", "", func(s scaleStep) float64 { return s.updateP99 }},
	{"direct_update_p50", "ms", "direct apply to every spoke → last watch", func(s scaleStep) float64 { return s.directP50 }},
	{"direct_update_p99", "ms", "", func(s scaleStep) float64 { return s.directP99 }},
	{"update_cpu", "CPU-s", fmt.Sprintf("hub controller CPU for %d edits", scaleEdits), func(s scaleStep) float64 { return s.updateCPU }},
	{"update_wall", "s", fmt.Sprintf("wall time of the %d edits, the direct client's and the pauses between them included", scaleEdits), func(s scaleStep) float64 { return s.updateWall }},
	{"update_hub_writes", "req/edit", "Flotilla's writes to the hub per edit", func(s scaleStep) float64 { return s.updateHubWrites }},
	{"update_spoke_writes", "req/edit", "Flotilla's writes to all spokes per edit", func(s scaleStep) float64 { return s.updateSpokeWrites }},
	{"idle_hub_writes", "req/s", fmt.Sprintf("Flotilla's writes to the hub, converged and idle (%s)", scaleIdleWindow), func(s scaleStep) float64 { return s.idleHubWrites }},
	{"idle_hub_reads", "req/s", "its reads of the hub then (watches excluded: they end later)", func(s scaleStep) float64 { return s.idleHubReads }},
	{"idle_spoke_requests", "req/s", "its requests to all spokes together then", func(s scaleStep) float64 { return s.idleSpokeRequests }},
	{"idle_cpu", "cores", "hub controller CPU share of a core then", func(s scaleStep) float64 { return s.idleCPU }},
	{"idle_spoke_planes_cpu", "cores", "every spoke's API server and etcd together then (the test fleet, not Flotilla)", func(s scaleStep) float64 { return s.idleSpokeCPU }},
	{"spoke_watches", "watches", "watches the hub held on all spokes together (audit logs, as they ended)", func(s scaleStep) float64 { return s.spokeWatches }},
	{"hub_watches", "watches", "watches it held on the hub API server", func(s scaleStep) float64 { return s.hubWatch }},
}

// fill computes the rows from the steps' results.
func (t *scaleTable) fill(steps []scaleStep) {
	xs := make([]float64, len(steps))
	for i, s := range steps {
		xs[i] = float64(s.spokes)
	}
	for _, fig := range scaleFigures {
		row := scaleRow{Name: fig.name, Unit: fig.unit, Note: fig.note}
		for _, s := range steps {
			row.Values = append(row.Values, fig.value(s))
		}
		if slope, intercept, ok := leastSquares(xs, row.Values); ok {
			row.Slope, row.Intercept = f(slope), f(intercept)
		}
		t.Rows = append(t.Rows, row)
	}
}

// leastSquares fits y = intercept + slope·x; ok is false when x takes fewer than two values.
func leastSquares(xs, ys []float64) (slope, intercept float64, ok bool) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if n < 2 || d == 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / d
	return slope, (sy - slope*sx) / n, true
}

func (t *scaleTable) print(w io.Writer) {
	fmt.Fprintf(w, "\nScale: the same %d objects per spoke at %v spokes; slope per added cluster by %s\n\n", t.Objects, t.Steps, t.Fit)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := "FIGURE\tUNIT"
	for _, n := range t.Steps {
		head += "\t" + strconv.Itoa(n) + " SPOKES"
	}
	fmt.Fprintln(tw, head+"\tSLOPE/CLUSTER\tINTERCEPT\tNOTE")
	show := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.3g", *v)
	}
	for _, row := range t.Rows {
		line := row.Name + "\t" + row.Unit
		for _, v := range row.Values {
			line += "\t" + show(&v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", line, show(row.Slope), show(row.Intercept), row.Note)
	}
	_ = tw.Flush()
}
