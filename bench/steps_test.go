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
		{"", stepNames[:len(stepNames)-1]}, // takeover only when named
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
