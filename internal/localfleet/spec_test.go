package localfleet

import (
	"strings"
	"testing"
)

func TestPlaneSpecWithDefaults(t *testing.T) {
	tests := []struct {
		name    string
		in      PlaneSpec
		want    PlaneSpec
		wantErr string
	}{
		{
			name: "hub is always api only",
			in:   PlaneSpec{Name: "hub", Role: RoleHub, Mode: ModeFull},
			want: PlaneSpec{Name: "hub", Role: RoleHub, Mode: ModeAPIOnly},
		},
		{
			name: "spoke defaults to api only",
			in:   PlaneSpec{Name: "a", Role: RoleSpoke},
			want: PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeAPIOnly},
		},
		{
			name: "full spoke gets two nodes and default capacity",
			in:   PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeFull},
			want: PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeFull, Nodes: 2, NodeCapacity: DefaultNodeCapacity},
		},
		{
			name: "full spoke keeps explicit nodes and capacity",
			in:   PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeFull, Nodes: 5, NodeCapacity: Capacity{CPU: "2", Memory: "4Gi", Pods: 10}},
			want: PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeFull, Nodes: 5, NodeCapacity: Capacity{CPU: "2", Memory: "4Gi", Pods: 10}},
		},
		{name: "empty name", in: PlaneSpec{Role: RoleSpoke}, wantErr: "must be a DNS label"},
		{name: "upper-case name", in: PlaneSpec{Name: "Spoke", Role: RoleSpoke}, wantErr: "must be a DNS label"},
		{name: "unknown role", in: PlaneSpec{Name: "a", Role: "worker"}, wantErr: `unknown role "worker"`},
		{name: "unknown mode", in: PlaneSpec{Name: "a", Role: RoleSpoke, Mode: "half"}, wantErr: `unknown mode "half"`},
		{name: "negative nodes", in: PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeFull, Nodes: -1}, wantErr: "nodes must be between"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.withDefaults()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want.Name || got.Role != tt.want.Role || got.Mode != tt.want.Mode ||
				got.Nodes != tt.want.Nodes || got.NodeCapacity != tt.want.NodeCapacity {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestValidateFleet(t *testing.T) {
	tests := []struct {
		name    string
		planes  []PlaneSpec
		wantErr string
	}{
		{name: "no planes", wantErr: "no planes"},
		{name: "duplicate names", planes: []PlaneSpec{{Name: "a", Role: RoleSpoke}, {Name: "a", Role: RoleSpoke}}, wantErr: `two planes are named "a"`},
		{name: "two hubs", planes: []PlaneSpec{{Name: "a", Role: RoleHub}, {Name: "b", Role: RoleHub}}, wantErr: "at most one hub"},
		{name: "hub and spokes", planes: []PlaneSpec{{Name: "hub", Role: RoleHub}, {Name: "a", Role: RoleSpoke}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validate(tt.planes)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheckBinariesNamesMakeTools(t *testing.T) {
	dir := t.TempDir()
	err := checkBinaries(dir, []PlaneSpec{{Name: "a", Role: RoleSpoke, Mode: ModeFull}})
	if err == nil {
		t.Fatal("expected an error for an empty binary directory")
	}
	for _, want := range []string{"make tools", "kube-apiserver", "etcd", "kwok", "kube-scheduler", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
