package localfleet

import "fmt"

// serviceNetwork is the Service network of one plane: the range its kube-apiserver allocates
// ClusterIPs from, and the first address of it, which the in-cluster API server Service
// ("kubernetes" in the default namespace) gets.
type serviceNetwork struct {
	cidr        string // e.g. "10.97.0.0/16"
	apiServerIP string // e.g. "10.97.0.1"
}

// The second octet of the planes' Service networks: 10.96.0.0/16 (kubeadm's default) for the
// hub, then one /16 per spoke, up to 10.243.0.0/16 so as to stay clear of the Pod network,
// 10.244.0.0/16 (podCIDR).
const (
	hubServiceOctet        = 96
	firstSpokeServiceOctet = 97
	spokeServiceNetworks   = 243 - firstSpokeServiceOctet + 1
)

// serviceNetworks gives each plane of specs, in order, its own Service network: the hub
// 10.96.0.0/16 and the spokes 10.97.0.0/16, 10.98.0.0/16 and on, in the order they are listed.
// With one range for all, a ClusterIP allocated on the hub is valid on every spoke, and a test
// cannot see that one was delivered (review H1). Past the 147th spoke the networks start again
// at 10.97: spokes may then share one with each other, never with the hub.
//
// A plane's network depends on its position, and its serving certificate, written once, names
// the API server Service's address: a plane restarted from its directory must keep its place.
func serviceNetworks(specs []PlaneSpec) []serviceNetwork {
	out := make([]serviceNetwork, len(specs))
	spokes := 0
	for i, s := range specs {
		octet := hubServiceOctet
		if s.Role == RoleSpoke {
			octet = firstSpokeServiceOctet + spokes%spokeServiceNetworks
			spokes++
		}
		out[i] = serviceNetwork{
			cidr:        fmt.Sprintf("10.%d.0.0/16", octet),
			apiServerIP: fmt.Sprintf("10.%d.0.1", octet),
		}
	}
	return out
}
