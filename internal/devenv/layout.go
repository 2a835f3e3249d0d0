package devenv

import (
	"fmt"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// Limits on the dev fleet's size. A full spoke costs about 600 MB and a share of two cores;
// beyond these numbers the machine, not Flotilla, is what the user would be testing.
const (
	MaxSpokes = 10
	MaxNodes  = 50
)

// regions and envs label the spokes in turn, so that selectors such as region=eu-west or
// env=prod pick a meaningful subset of the fleet.
var (
	regions = []string{"eu-west", "us-east", "ap-south"}
	envs    = []string{"prod", "staging"}
)

// SpokeName returns the name of the i-th spoke (counting from 1).
func SpokeName(i int) string { return fmt.Sprintf("spoke-%d", i) }

// Layout returns the hub and spokes full spokes of nodes fake Nodes each. Spoke i is labelled
// region=regions[i mod 3] and env=envs[i mod 2].
func Layout(spokes, nodes int) ([]localfleet.PlaneSpec, error) {
	if spokes < 1 || spokes > MaxSpokes {
		return nil, fmt.Errorf("--spokes must be between 1 and %d, got %d", MaxSpokes, spokes)
	}
	if nodes < 1 || nodes > MaxNodes {
		return nil, fmt.Errorf("--nodes must be between 1 and %d, got %d", MaxNodes, nodes)
	}
	planes := []localfleet.PlaneSpec{{Name: "hub", Role: localfleet.RoleHub}}
	for i := range spokes {
		planes = append(planes, localfleet.PlaneSpec{
			Name:  SpokeName(i + 1),
			Role:  localfleet.RoleSpoke,
			Mode:  localfleet.ModeFull,
			Nodes: nodes,
			Labels: map[string]string{
				"region": regions[i%len(regions)],
				"env":    envs[i%len(envs)],
			},
		})
	}
	return planes, nil
}
