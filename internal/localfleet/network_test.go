package localfleet

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestServiceNetworks(t *testing.T) {
	hub := PlaneSpec{Name: "hub", Role: RoleHub}
	spoke := func(name string) PlaneSpec { return PlaneSpec{Name: name, Role: RoleSpoke} }
	tests := []struct {
		name  string
		specs []PlaneSpec
		want  []serviceNetwork
	}{
		{
			name:  "hub first",
			specs: []PlaneSpec{hub, spoke("a"), spoke("b")},
			want: []serviceNetwork{
				{cidr: "10.96.0.0/16", apiServerIP: "10.96.0.1"},
				{cidr: "10.97.0.0/16", apiServerIP: "10.97.0.1"},
				{cidr: "10.98.0.0/16", apiServerIP: "10.98.0.1"},
			},
		},
		{
			name:  "hub listed among spokes",
			specs: []PlaneSpec{spoke("a"), hub, spoke("b")},
			want: []serviceNetwork{
				{cidr: "10.97.0.0/16", apiServerIP: "10.97.0.1"},
				{cidr: "10.96.0.0/16", apiServerIP: "10.96.0.1"},
				{cidr: "10.98.0.0/16", apiServerIP: "10.98.0.1"},
			},
		},
		{
			name:  "spokes only",
			specs: []PlaneSpec{spoke("a")},
			want:  []serviceNetwork{{cidr: "10.97.0.0/16", apiServerIP: "10.97.0.1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serviceNetworks(tt.specs); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServiceNetworksAreValidAndNeverTheHubs(t *testing.T) {
	specs := []PlaneSpec{{Name: "hub", Role: RoleHub}}
	for range 2*spokeServiceNetworks + 1 {
		specs = append(specs, PlaneSpec{Role: RoleSpoke})
	}
	networks := serviceNetworks(specs)
	_, pods, _ := net.ParseCIDR(podCIDR)
	seen := map[string]bool{}
	for i, n := range networks {
		ip, cidr, err := net.ParseCIDR(n.cidr)
		if err != nil || !ip.Equal(cidr.IP) {
			t.Fatalf("plane %d: %q is not a network address: %v", i, n.cidr, err)
		}
		first := slices.Clone(cidr.IP.To4())
		first[3]++
		if n.apiServerIP != first.String() {
			t.Errorf("plane %d: API server IP %s, want the first address of %s", i, n.apiServerIP, n.cidr)
		}
		if cidr.Contains(pods.IP) || pods.Contains(cidr.IP) {
			t.Errorf("plane %d: %s overlaps the Pod network %s", i, n.cidr, podCIDR)
		}
		if i > 0 && n == networks[0] {
			t.Errorf("spoke %d shares the hub's network %s", i, n.cidr)
		}
		if i > 0 && i <= spokeServiceNetworks && seen[n.cidr] {
			t.Errorf("spoke %d repeats %s before the networks run out", i, n.cidr)
		}
		seen[n.cidr] = true
	}
}

func TestPlaneFlagsAndCertificateAgreeOnTheServiceNetwork(t *testing.T) {
	network := serviceNetworks([]PlaneSpec{{Role: RoleHub}, {Role: RoleSpoke}})[1]
	p := &Plane{spec: PlaneSpec{Name: "a", Role: RoleSpoke, Mode: ModeFull}, network: network,
		pki: pki{dir: t.TempDir(), serviceIP: network.apiServerIP}}
	want := "--service-cluster-ip-range=10.97.0.0/16"
	for _, c := range []component{p.apiServer(), p.controllerManager("*")} {
		if !slices.Contains(c.args, want) {
			t.Errorf("%s args %s lack %s", c.name, strings.Join(c.args, " "), want)
		}
	}
	if err := p.pki.ensure(); err != nil {
		t.Fatal(err)
	}
	serving := loadCert(t, p.pki, servingCertFile, servingKeyFile)
	if err := serving.VerifyHostname("10.97.0.1"); err != nil {
		t.Errorf("serving certificate does not name the API server Service: %v", err)
	}
	if err := serving.VerifyHostname("10.96.0.1"); err == nil {
		t.Error("serving certificate names the hub's API server Service")
	}
}
