package inventory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/intern"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/spokeclient"
)

// Options tunes the provider.
type Options struct {
	// ProbeInterval is how often each healthy spoke is probed (default 10s); one that is not
	// Ready is probed five times as often (at least a second apart). An unreachable spoke turns
	// Ready=Unknown within ProbeInterval+ProbeTimeout and back within a fifth of an interval of
	// returning.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe (default 5s, at most ProbeInterval).
	ProbeTimeout time.Duration
	// UserAgent identifies Flotilla in the spokes' request metrics and audit logs.
	UserAgent string
	// OnReady, if set, is called (in its own goroutine) when a spoke turns Ready, so work that
	// waited for it can resume at once instead of at its next retry.
	OnReady func(cluster string)
	// RenewWhenRemaining is the share of a token's lifetime left when the hub renews it
	// (default 1/3; between 0 and 1). A third leaves room for the hub to be away, or for
	// renewal to fail and be retried, for a third of the lifetime before the token expires.
	RenewWhenRemaining float64
	// Owners are the owners whose objects spoke caches keep whole; nil keeps every object
	// carrying the owner label. Spokes are engaged once its sources have synced.
	Owners *owners.Registry
	// CacheBytesPerCluster bounds what one spoke's cache keeps whole, in estimated bytes of
	// JSON (default DefaultCacheBytesPerCluster); objects past it are kept as stubs.
	CacheBytesPerCluster int64
	// RecordOwners are the kinds Delivery records may belong to: a cluster's status.placed
	// sums only records the ledger wrote for a live owner (ledger.Trust).
	RecordOwners ledger.Owners
	// EveryReplica engages spokes on every hub replica, not on the elected one alone: a
	// sharded hub, whose coordinator starts each spoke's delivery on the replica that holds
	// it (package shard). Only the elected replica writes Clusters' status, records their
	// Events and renews their tokens.
	EveryReplica bool
}

func (o Options) withDefaults() Options {
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = 10 * time.Second
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 5 * time.Second
	}
	o.ProbeTimeout = min(o.ProbeTimeout, o.ProbeInterval)
	if o.UserAgent == "" {
		o.UserAgent = "flotilla"
	}
	if o.RenewWhenRemaining <= 0 || o.RenewWhenRemaining >= 1 {
		o.RenewWhenRemaining = 1.0 / 3
	}
	return o
}

var _ multicluster.Provider = &Provider{}

// Provider is the multicluster-runtime provider backed by Cluster objects on the hub.
type Provider struct {
	opts   Options
	scheme *runtime.Scheme
	log    logr.Logger

	mgr mcmanager.Manager // nil in tests that drive the provider without a manager
	// elected reports whether this replica is the elected one (always, without leader
	// election); set up with the manager.
	elected func() bool
	events  chan event.GenericEvent
	// hub writes renewed tokens into credentials Secrets, which reader reads uncached; both
	// are nil without a manager, and then nothing is renewed.
	hub    client.Client
	reader client.Reader

	strings *intern.Table // shared by every spoke cache

	mu       sync.RWMutex
	members  map[string]*member
	indexers []index
	// renewed holds, per cluster, the expiry of the last token the hub issued, so the member
	// built from it reports Renewed.
	renewed map[string]int64
	// grants holds, per cluster, the ClusterRole the spoke grants Flotilla (see Grant).
	grants map[string]string
	// flows holds, per cluster, the flow control every client of the spoke shares; it outlives
	// credential rotations, since what it learned is about the spoke.
	flows map[string]*spokeclient.Flow
}

type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// New returns a provider whose spoke clusters decode objects with scheme.
func New(scheme *runtime.Scheme, opts Options) *Provider {
	return &Provider{
		opts:    opts.withDefaults(),
		scheme:  scheme,
		log:     ctrllog.Log.WithName("inventory"),
		events:  make(chan event.GenericEvent, 1024),
		members: map[string]*member{},
		renewed: map[string]int64{},
		grants:  map[string]string{},
		flows:   map[string]*spokeclient.Flow{},
		strings: intern.NewTable(internLimit, internMaxLen),
	}
}

// Get returns the engaged spoke with this name, or multicluster.ErrClusterNotFound when the
// spoke is unknown, has unusable credentials, or has not answered a probe yet.
func (p *Provider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.RLock()
	m, ok := p.members[string(name)]
	p.mu.RUnlock()
	if ok {
		if cl := m.engagedCluster(); cl != nil {
			return cl, nil
		}
	}
	return nil, fmt.Errorf("cluster %q: %w", name, multicluster.ErrClusterNotFound)
}

// IndexField adds a field index on every engaged spoke, now and later.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	p.mu.Lock()
	p.indexers = append(p.indexers, index{obj: obj, field: field, extract: extract})
	members := make([]*member, 0, len(p.members))
	for _, m := range p.members {
		members = append(members, m)
	}
	p.mu.Unlock()
	for _, m := range members {
		if cl := m.engagedCluster(); cl != nil {
			if err := cl.GetFieldIndexer().IndexField(ctx, obj, field, extract); err != nil {
				return fmt.Errorf("index %s on cluster %s: %w", field, m.name, err)
			}
		}
	}
	return nil
}

func (p *Provider) applyIndexers(ctx context.Context, cl cluster.Cluster) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, idx := range p.indexers {
		if err := cl.GetFieldIndexer().IndexField(ctx, idx.obj, idx.field, idx.extract); err != nil {
			return fmt.Errorf("index %s: %w", idx.field, err)
		}
	}
	return nil
}

// restConfigFor applies Flotilla's per-spoke client settings to a member's kubeconfig: every
// client built from it (the cluster's cache and client, the deliverer's applier, the probe,
// renewal) shares the spoke's flow control, which has no fixed rate and follows what the spoke
// answers (see spokeclient).
func (p *Provider) restConfigFor(m *member) *rest.Config {
	cfg := m.flow.Configure(m.creds.config)
	cfg.UserAgent = p.opts.UserAgent
	return cfg
}

// ensureMember starts probing a Cluster with these credentials, replacing a member that uses
// other credentials (rotation re-engages the spoke).
func (p *Provider) ensureMember(ctx context.Context, name string, creds *credentials) *member {
	p.mu.Lock()
	old, ok := p.members[name]
	if ok && old.creds.hash == creds.hash {
		p.mu.Unlock()
		return old
	}
	memberCtx, cancel := context.WithCancel(ctx)
	flow, known := p.flows[name]
	if !known {
		flow = spokeclient.New(name)
		p.flows[name] = flow
	}
	m := &member{name: name, creds: creds, flow: flow, cancel: cancel, done: make(chan struct{})}
	m.credObs, _ = credentialsVerdict(creds, nil, time.Now(), p.opts.RenewWhenRemaining, creds.token != nil && p.renewed[name] == creds.token.Expiry, "")
	p.members[name] = m
	p.mu.Unlock()
	if ok {
		p.log.Info("Credentials changed; reconnecting to the spoke", "cluster", name)
		old.cancel()
		<-old.done
	}
	go p.run(memberCtx, m)
	return m
}

// removeMember stops probing and watching a spoke. Nothing on the spoke is touched.
func (p *Provider) removeMember(name string) {
	p.mu.Lock()
	m, ok := p.members[name]
	delete(p.members, name)
	delete(p.renewed, name)
	flow := p.flows[name]
	delete(p.flows, name)
	p.mu.Unlock()
	if flow != nil {
		defer flow.Forget()
	}
	if !ok {
		return
	}
	m.cancel()
	<-m.done
	forgetMetrics(name)
}

// notify asks the status writer to look at a Cluster again.
func (p *Provider) notify(ctx context.Context, name string) {
	obj := &flotillav1.Cluster{}
	obj.SetName(name)
	select {
	case p.events <- event.GenericEvent{Object: obj}:
	case <-ctx.Done():
	}
}

// Grant returns the ClusterRole the spoke binds Flotilla's credentials to, as `flotilla join`
// recorded it on the Cluster, or "" when it is not known. Delivery names it when the spoke
// forbids an object.
func (p *Provider) Grant(cluster string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.grants[cluster]
}

// setGrant records a Cluster's grant; "" forgets it.
func (p *Provider) setGrant(cluster, role string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if role == "" {
		delete(p.grants, cluster)
		return
	}
	p.grants[cluster] = role
}

// isElected reports whether this replica writes what the inventory writes on the hub: the
// elected one (Options.EveryReplica).
func (p *Provider) isElected() bool { return p.elected == nil || p.elected() }
