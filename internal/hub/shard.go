package hub

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/shard"
)

// Replicas of a sharded hub read and write their peer and fence Leases in the hub's namespace
// (the election's namespace): list finds the peers.
// A replica that stops deletes its own Lease, so that the others take its clusters at once.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;create;update;delete,namespace=flotilla-system

// shardCoordinator is the coordinator that divides the clusters between a sharded hub's
// replicas, with a client of its own that reads Leases directly.
func shardCoordinator(cfg *rest.Config, opts shard.Options) (mcmanager.Coordinator, error) {
	if opts.ID == "" || opts.Namespace == "" {
		return nil, fmt.Errorf("a sharded hub replica needs a name of its own (--replica-name, its Pod name) and the namespace of its Leases")
	}
	if errs := validation.IsDNS1123Label(opts.ID); len(errs) > 0 {
		return nil, fmt.Errorf("replica name %q: %s (it names the replica's Lease)", opts.ID, strings.Join(errs, "; "))
	}
	// Every Lease request ends well within a Lease's life: a hub that does not answer must not
	// keep a replica from noticing that it can no longer count on its fences.
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 5 * time.Second
	kube, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("the Lease client of the shard coordinator: %w", err)
	}
	return shard.New(kube, opts, ctrl.Log.WithName("shard").WithValues("replica", opts.ID)), nil
}
