package main

import (
	"slices"
	"testing"
)

func TestSelectSteps(t *testing.T) {
	for _, tc := range []struct {
		only string
		want []string
	}{
		{"", stepNames[1 : len(stepNames)-1]}, // scale and takeover only when named
		{"scale", []string{"scale"}},          // standalone: fleets of its own
		{"takeover", []string{"takeover"}},
		{"update", []string{"bulk", "update"}},
		{"instance_ready", []string{"instance_ready"}},                        // standalone: from the bare fleet
		{"drift,instance_ready", []string{"bulk", "drift", "instance_ready"}}, // drift needs bulk's objects
	} {
		got, err := selectSteps(tc.only)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("selectSteps(%q) = %v, %v; want %v", tc.only, got, err, tc.want)
		}
	}
	if _, err := selectSteps("instances"); err == nil {
		t.Error("selectSteps accepted an unknown scenario")
	}
}

func TestParseScaleSteps(t *testing.T) {
	got, err := parseScaleSteps("1, 10,30")
	if err != nil || !slices.Equal(got, []int{1, 10, 30}) {
		t.Errorf("parseScaleSteps = %v, %v; want [1 10 30]", got, err)
	}
	for _, bad := range []string{"", "0,10", "10,1", "1,51", "1,x"} {
		if _, err := parseScaleSteps(bad); err == nil {
			t.Errorf("parseScaleSteps(%q) accepted", bad)
		}
	}
}

func TestLeastSquares(t *testing.T) {
	slope, intercept, ok := leastSquares([]float64{1, 10, 30}, []float64{52, 70, 110})
	if !ok || slope != 2 || intercept != 50 {
		t.Errorf("leastSquares = %v, %v, %v; want 2, 50, true", slope, intercept, ok)
	}
	if _, _, ok := leastSquares([]float64{10}, []float64{3}); ok {
		t.Error("leastSquares fitted a line through one point")
	}
}
