package devenv

import (
	"strings"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

func TestLayout(t *testing.T) {
	planes, err := Layout(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, region, env string }{
		{"hub", "", ""},
		{"spoke-1", "eu-west", "prod"},
		{"spoke-2", "us-east", "staging"},
		{"spoke-3", "ap-south", "prod"},
	}
	if len(planes) != len(want) {
		t.Fatalf("got %d planes, want %d", len(planes), len(want))
	}
	for i, w := range want {
		p := planes[i]
		if p.Name != w.name || p.Labels["region"] != w.region || p.Labels["env"] != w.env {
			t.Errorf("plane %d = %s %v, want %s region=%s env=%s", i, p.Name, p.Labels, w.name, w.region, w.env)
		}
		if i == 0 {
			if p.Role != localfleet.RoleHub {
				t.Errorf("first plane role = %s, want hub", p.Role)
			}
			continue
		}
		if p.Role != localfleet.RoleSpoke || p.Mode != localfleet.ModeFull || p.Nodes != 2 {
			t.Errorf("spoke %s = %s/%s with %d nodes, want a full spoke with 2 nodes", p.Name, p.Role, p.Mode, p.Nodes)
		}
	}
}

func TestLayoutRejectsAbsurdSizes(t *testing.T) {
	tests := []struct {
		spokes, nodes int
		want          string
	}{
		{0, 2, "--spokes must be between 1 and 10, got 0"},
		{-1, 2, "--spokes must be between 1 and 10, got -1"},
		{11, 2, "--spokes must be between 1 and 10, got 11"},
		{3, 0, "--nodes must be between 1 and 50, got 0"},
		{3, 51, "--nodes must be between 1 and 50, got 51"},
	}
	for _, tt := range tests {
		_, err := Layout(tt.spokes, tt.nodes)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Layout(%d, %d) error = %v, want %q", tt.spokes, tt.nodes, err, tt.want)
		}
	}
}

func TestCheckPullSpokes(t *testing.T) {
	for _, ok := range [][2]int{{3, 0}, {3, 1}, {3, 3}, {1, 1}} {
		if err := CheckPullSpokes(ok[0], ok[1]); err != nil {
			t.Errorf("CheckPullSpokes(%d, %d) = %v, want nil", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][2]int{{3, 4}, {3, -1}, {1, 2}} {
		err := CheckPullSpokes(bad[0], bad[1])
		if err == nil || !strings.Contains(err.Error(), "--pull-spokes must be between 0 and --spokes") {
			t.Errorf("CheckPullSpokes(%d, %d) = %v, want a range error", bad[0], bad[1], err)
		}
	}
}
