package hub

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/hubmetrics"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/placement"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/shard"
	"github.com/flotilla-dev/flotilla/internal/sources"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// Options configures the hub controller.
type Options struct {
	// MetricsAddr serves Prometheus metrics ("0" disables), over HTTPS to scrapers the hub API
	// server authenticates and authorizes for /metrics (see metrics.go).
	MetricsAddr string
	// MetricsPlainHTTP serves them as plain HTTP without authentication instead, on a loopback
	// MetricsAddr only: for local development.
	MetricsPlainHTTP bool
	// HealthAddr serves /healthz and /readyz ("0" disables).
	HealthAddr string
	// LeaderElection makes replicas elect one active controller through a Lease in
	// LeaderElectionNamespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	// PprofAddr serves Go's pprof profiles ("" or "0" disables).
	PprofAddr string
	// VerifyInterval is how often every delivery is confirmed against the spoke caches as a
	// backstop to the spoke watches (0: 10 minutes; negative: never).
	VerifyInterval time.Duration
	// AdminNamespaces are the namespaces whose Placements ClusterPropagations may use
	// (default: flotilla-system).
	AdminNamespaces []string
	// Inventory tunes probing of spokes.
	Inventory inventory.Options
	// Sources says which importers turn clusters registered elsewhere into Clusters.
	Sources sources.Options
	// Graphs says which fleet APIs each spoke serves; their instances there are expanded on
	// that spoke (internal/instances). Nil: what the APIPropagations serve (internal/fleetapi).
	Graphs instances.Graphs
	// WorkAddr serves pull-mode agents their clusters' work (package clusterwork; "" or "0"
	// disables it): over TLS with WorkCertFile and WorkKeyFile, else as plain HTTP on a
	// loopback address only (development: the responses carry Secret data).
	WorkAddr                  string
	WorkCertFile, WorkKeyFile string
	// WorkReady, when set, is told the work endpoint's URL once it listens.
	WorkReady func(url string)
	// WorkProtectionInterval is how long the work endpoint believes its look at the Delivery
	// policy (0: clusterwork.ProtectionInterval); tests shorten it.
	WorkProtectionInterval time.Duration

	// Shard, when set, divides the clusters between the hub's replicas (package shard): each
	// delivers to the clusters it holds, through agents in its own process; the elected one
	// runs the owner controllers and writes every status. Nil: the elected replica delivers
	// to every cluster.
	Shard *shard.Options

	// newCache builds the hub cache (nil: controller-runtime's); this package's tests wrap it to
	// see what the controller asks the cache to hold.
	newCache cache.NewCacheFunc
}

// UserAgent identifies the hub controller's requests to the hub in audit logs and metrics; its
// requests to spokes say "flotilla".
const UserAgent = "flotilla-hub"

// leaderElectionID names the Lease replicas compete for.
const leaderElectionID = "flotilla-hub"

// reconcileTimeout bounds every reconcile of every hub controller. A reconcile reads caches
// and submits deliveries without waiting for them, which takes seconds even for a thousand
// objects on a busy machine; the reads inside it have shorter deadlines of their own.
const reconcileTimeout = 2 * time.Minute

// Leader election reads, creates and renews one Lease, in the controller's own namespace only: a
// cluster-wide grant would reach kube-node-lease and kube-system's Leases. Run with another
// --leader-election-namespace and this Role (config/rbac/role.yaml) must move with it.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=flotilla-system

// Run runs the hub controller against the hub API server until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = UserAgent
	scheme := install.Scheme()
	var deliverer *deliver.Deliverer
	owning := newControllers(opts)
	owning.agentsEverywhere(opts.Shard != nil)
	kinds := ownerKinds(owning)
	recordOwners := kinds.RecordOwners(scheme)
	inventoryOpts := opts.Inventory
	// The owners that exist, by owner label value: what spoke caches keep whole.
	known := owners.New()
	inventoryOpts.Owners = known
	inventoryOpts.RecordOwners = recordOwners
	inventoryOpts.OnReady = func(cluster string) {
		if deliverer != nil {
			deliverer.Retry(cluster)
		}
		owning.fleetAPIs.ClusterReady(cluster)
	}
	var mcOpts []mcmanager.Option
	if opts.Shard != nil {
		// Every replica engages every spoke; the coordinator starts each on the replica
		// that holds it. Each replica's writes to spokes say which replica made them.
		inventoryOpts.EveryReplica, inventoryOpts.UserAgent = true, "flotilla/"+opts.Shard.ID
		coord, err := shardCoordinator(cfg, *opts.Shard)
		if err != nil {
			return err
		}
		mcOpts = append(mcOpts, mcmanager.WithCoordinator(coord))
	}
	provider := inventory.New(scheme, inventoryOpts)
	metrics, err := metricsOptions(opts.MetricsAddr, opts.MetricsPlainHTTP)
	if err != nil {
		return err
	}
	mgr, err := mcmanager.New(cfg, provider, manager.Options{
		Scheme:                        scheme,
		Metrics:                       metrics,
		HealthProbeBindAddress:        opts.HealthAddr,
		PprofBindAddress:              pprofAddr(opts.PprofAddr),
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              leaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr(10 * time.Second),
		// Hub objects of the kinds Flotilla delivers are read as unstructured, and every such
		// kind is watched: read them from the cache too, not with a LIST of the API server on
		// every reconcile (a thousand objects, decoded, for each hub edit). Secrets are the
		// exception: the cache holds their metadata only (see propagation's selectSecrets).
		Client:   client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		NewCache: opts.newCache,
		// Run may be called again in one process (tests restart the controller); each run
		// registers its controllers once. Every reconcile has a deadline: one that waits on
		// something that never comes (a cache that cannot sync) is cut off and retried, and
		// its worker is free for other objects.
		Controller: config.Controller{SkipNameValidation: ptr(true), ReconciliationTimeout: reconcileTimeout},
	}, mcOpts...)
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	// Fleet gauges read the hub cache when scraped, on the elected replica only.
	defer hubmetrics.Use(mgr.GetLocalManager().GetCache(), mgr.GetLocalManager().Elected(), owning.memoryOwners()...)()
	if err := feedOwners(ctx, mgr.GetLocalManager().GetCache(), kinds, known); err != nil {
		return err
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up cluster inventory: %w", err)
	}
	if err := sources.Setup(ctx, mgr.GetLocalManager(), opts.Sources); err != nil {
		return fmt.Errorf("set up cluster importers: %w", err)
	}
	if err := (&placement.Reconciler{Client: mgr.GetLocalManager().GetClient(), Owners: recordOwners}).SetupWithManager(mgr.GetLocalManager()); err != nil {
		return fmt.Errorf("set up placement scheduling: %w", err)
	}
	if deliverer, err = setupDelivery(ctx, mgr, provider, owning, kinds, known, opts); err != nil {
		return err
	}
	work, err := serveWork(mgr.GetLocalManager(), cfg, owning.propagation.Revisions, owning.propagation.Ledger, kinds.Notify, recordOwners, opts)
	if err != nil {
		return err
	}
	if opts.Shard != nil {
		// The clusters this replica holds are delivered by agents in this process.
		agents := &shard.Agents{Work: work, Log: ctrl.Log.WithName("shard"),
			Deliver: deliver.Options{VerifyInterval: opts.VerifyInterval, Grant: provider.Grant}}
		if err := mgr.Add(agents); err != nil {
			return err
		}
	}
	if opts.HealthAddr != "0" && opts.HealthAddr != "" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return err
		}
	}
	ctrl.LoggerFrom(ctx).Info("Starting Flotilla hub controller", "hub", cfg.Host)
	return mgr.Start(ctx)
}

func ptr[T any](v T) *T { return &v }

func pprofAddr(a string) string {
	if a == "0" {
		return ""
	}
	return a
}

// setupDelivery creates the deliverer, the one writer to spokes, and sets up the owner
// controllers that feed it: Propagations, transparent mode and fleet APIs. Delivery results and
// drift go back to the controller of their owner's kind (kinds); those of owners on spokes
// (fleet API instances) to the instances controller, which expands them there.
func setupDelivery(ctx context.Context, mgr mcmanager.Manager, provider *inventory.Provider, owning *controllers, kinds *ownerkinds.Registry,
	known *owners.Registry, opts Options) (*deliver.Deliverer, error) {
	local := mgr.GetLocalManager()
	prop, apis := owning.propagation, owning.fleetAPIs
	var fleetAPIs *instances.Controller
	route := func(owner render.Owner) {
		if !owner.OnSpoke() {
			kinds.Notify(owner)
		} else if fleetAPIs != nil {
			fleetAPIs.Notify(owner)
		}
	}
	onDrift := func(owner render.Owner, cluster string, d deliver.Drift) {
		if !owner.OnSpoke() { // an instance's children: corrected as kro corrects them, and not recorded
			kinds.RecordDrift(owner, cluster, d)
		}
	}
	d := deliver.New(ctx, route, deliver.Options{OnDrift: onDrift, VerifyInterval: opts.VerifyInterval, Grant: provider.Grant})
	sharded := opts.Shard != nil
	if !sharded {
		// The manager engages every spoke the inventory engages into the deliverer. Sharded,
		// the replicas' agents deliver instead (package shard).
		if err := mgr.Add(d); err != nil {
			return nil, err
		}
	}
	prop.Deliverer = d
	graphs := opts.Graphs
	if graphs == nil {
		// What the fleet API controller serves where is what the instances controller expands.
		served := instances.NewMemory()
		apis.Graphs, graphs = served, served
	}
	// Instances of fleet APIs on spokes, expanded there through the same deliverer.
	fleetAPIs = instances.New(graphs, d, instances.Options{Owners: known})
	// The APIPropagations' status counts the instances the instances controller watches.
	apis.Instances = fleetAPIs
	fleetAPIs.SubscribeCounts(apis.InstancesChanged)
	if !sharded { // sharded, each agent expands the instances of its own cluster
		if err := mgr.Add(fleetAPIs); err != nil {
			return nil, err
		}
	}
	ahead, err := aheadWriter(local)
	if err != nil {
		return nil, err
	}
	records := &ledger.Ledger{Hub: local.GetClient(), Ahead: ahead, Owners: kinds.RecordOwners(install.Scheme())}
	if err := local.Add(records); err != nil {
		return nil, err
	}
	prop.Ledger = records
	prop.Revisions = &revisions.Store{Hub: local.GetClient(), Metadata: local.GetClient(), Reader: local.GetAPIReader()}
	if err := local.Add(prop.Revisions); err != nil {
		return nil, err
	}
	if err := prop.SetupWithManager(local); err != nil {
		return nil, fmt.Errorf("set up propagation: %w", err)
	}
	for _, gvk := range transparent.Kinds {
		t := owning.transparent[(&transparent.Reconciler{GVK: gvk}).OwnerKind()]
		t.Hub, t.Deliverer, t.Clusters, t.Ledger, t.Revisions = local.GetClient(), d, provider, records, prop.Revisions
		if err := t.SetupWithManager(local); err != nil {
			return nil, fmt.Errorf("set up transparent mode for %s: %w", gvk.Kind, err)
		}
	}
	apis.Deliverer, apis.Clusters, apis.Ledger, apis.Revisions = d, provider, records, prop.Revisions
	if err := apis.SetupWithManager(local); err != nil {
		return nil, fmt.Errorf("set up fleet APIs: %w", err)
	}
	return d, nil
}
