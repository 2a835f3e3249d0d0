package inventory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/logkeys"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/spokeclient"
)

// versionEvery is how many probes pass between two reads of /version: versions change only on
// upgrades, and an idle spoke should see one request per probe period, not two.
const versionEvery = 30

// cacheStartTimeout bounds the wait for a new spoke cache to start (it starts in moments; a
// cache that does not is an engage failure the prober retries).
const cacheStartTimeout = 30 * time.Second

// ownersSyncTimeout bounds the wait for the hub's owner informers before a spoke is engaged
// (they sync in moments; one that cannot costs reads, not correctness).
const ownersSyncTimeout = 2 * time.Minute

// member is a Cluster with usable credentials: its prober, and its engaged cluster once a probe
// has succeeded.
type member struct {
	name   string
	creds  *credentials
	flow   *spokeclient.Flow  // the spoke's, shared with the members that replace this one
	cancel context.CancelFunc // stops the prober and disengages
	done   chan struct{}      // closed when the prober has stopped

	// Renewal state, used by the prober goroutine only: the token the hub issued and has not
	// read back yet, why the last renewal failed, and when to try again.
	pending      *tokenClaims
	renewFailure string
	retryAt      time.Time

	mu        sync.Mutex
	obs       observation // zero until the first probe ends
	credObs   observation // the CredentialsValid verdict
	version   string
	capacity  *capacity // nil until the spoke's Nodes are known
	engaged   cluster.Cluster
	disengage context.CancelFunc
}

// snapshot is a consistent copy of what a member knows, for the status writer.
type snapshot struct {
	obs      observation
	credObs  observation // zero when the credentials could not be read
	version  string
	capacity *capacity
}

func (m *member) snapshot() snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return snapshot{obs: m.obs, credObs: m.credObs, version: m.version, capacity: m.capacity}
}

// record stores a probe verdict and reports whether it differs from the previous one.
func (m *member) record(obs observation, version string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := m.obs != obs || (version != "" && version != m.version)
	m.obs = obs
	if version != "" {
		m.version = version
	}
	return changed
}

func (m *member) engagedCluster() cluster.Cluster {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.engaged
}

// run probes the spoke until ctx ends, engaging it after the first successful probe and
// disengaging it when the spoke rejects the credentials.
func (p *Provider) run(ctx context.Context, m *member) {
	defer close(m.done)
	defer p.disengage(m)
	log := p.log.WithValues(logkeys.Cluster, m.name)
	cfg := p.restConfigFor(m)
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Timeout = p.opts.ProbeTimeout
	pr, err := newProber(probeCfg)
	if err != nil {
		log.Error(err, "Cannot build a client for the spoke")
		return
	}
	sinceVersion := versionEvery
	for {
		start := time.Now()
		obs := pr.readyz(ctx)
		version := ""
		if obs.status == metav1.ConditionTrue && (sinceVersion >= versionEvery || m.snapshot().version == "") {
			v, failed, ok := pr.version(ctx)
			if ok {
				version, sinceVersion = v, 0
			} else {
				obs = failed
			}
		}
		sinceVersion++
		if ctx.Err() != nil {
			return
		}
		observeProbe(m.name, obs, start)
		switch {
		case obs.status == metav1.ConditionTrue && m.engagedCluster() == nil:
			if err := p.engage(ctx, m, cfg, log); err != nil {
				log.Error(err, "Cannot engage the spoke; will retry on the next probe")
			}
		case obs.status == metav1.ConditionFalse && rejectsUs(obs.reason):
			p.disengage(m)
		}
		wasReady := m.snapshot().obs.status == metav1.ConditionTrue
		credsChanged := p.checkCredentials(ctx, m, obs.status == metav1.ConditionTrue)
		if m.record(obs, version) {
			log.V(1).Info("Spoke health changed", "ready", obs.status, "reason", obs.reason)
			p.notify(ctx, m.name)
			if obs.status == metav1.ConditionTrue && !wasReady && p.opts.OnReady != nil {
				go p.opts.OnReady(m.name)
			}
		} else if credsChanged {
			p.notify(ctx, m.name)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.probeAfter(obs, time.Since(start))):
		}
	}
}

// probeAfter is the wait before the next probe: the probe interval for a healthy spoke, a fifth
// of it (at least a second) for one that is not, so that a spoke coming back is engaged
// and caught up within moments. Probing a spoke that does not answer costs it nothing.
func (p *Provider) probeAfter(obs observation, took time.Duration) time.Duration {
	interval := p.opts.ProbeInterval
	if obs.status != metav1.ConditionTrue {
		interval = max(interval/5, time.Second)
	}
	return max(interval-took, 0)
}

// rejectsUs tells the verdicts after which watching the spoke is pointless until the
// credentials change or the spoke is fixed. An unreachable spoke is not one of them: its
// watches resume by themselves when it returns.
func rejectsUs(reason string) bool {
	switch reason {
	case flotillav1.ReasonUnauthorized, flotillav1.ReasonForbidden, flotillav1.ReasonCertificateInvalid, flotillav1.ReasonNotKubernetes:
		return true
	}
	return false
}

// engage builds a controller-runtime cluster for the spoke, watches its Nodes for capacity, and
// hands it to every multicluster controller through the manager.
func (p *Provider) engage(ctx context.Context, m *member, cfg *rest.Config, log logr.Logger) error {
	// The spoke cache holds only what Flotilla manages (and Nodes, trimmed, for capacity):
	// a spoke full of other objects costs the hub nothing. Of the objects carrying the owner
	// label, which any spoke user can write, it keeps whole only known owners' (spokecache.go):
	// the registry must be complete first, or a restart would stub every delivered object.
	if p.opts.Owners != nil {
		syncCtx, cancel := context.WithTimeout(ctx, ownersSyncTimeout)
		synced := p.opts.Owners.WaitSynced(syncCtx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !synced {
			log.Info("The hub's owners are not all known yet; engaging anyway: objects of owners not yet known are read from the spoke until they next change",
				"waited", ownersSyncTimeout)
		}
	}
	budget := newCacheBudget(m.name, p.opts.CacheBytesPerCluster, log)
	spoke := newSpokeCache(m.name, p.opts.Owners, budget, p.strings)
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = p.scheme
		o.Cache.DefaultTransform = spoke.transform
		o.Cache.NewInformer = spoke.newInformer
		// A failed watch is logged once per kind, naming the cluster (watcherrors.go).
		o.Cache.DefaultWatchErrorHandler = newWatchErrors(m.name, p.log).handle
		o.Cache.DefaultLabelSelector = render.ManagedSelector()
		o.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.Node{}: {Transform: trimNode, Label: labels.Everything()}}
		o.NewCache = spoke.newCache
	})
	if err != nil {
		return err
	}
	engagedCtx, disengage := context.WithCancel(ctx)
	budgets.Store(m.name, budget)
	context.AfterFunc(engagedCtx, func() { budgets.CompareAndDelete(m.name, budget) })
	go func() {
		if err := cl.Start(engagedCtx); err != nil {
			log.Error(err, "Spoke cluster stopped")
		}
	}()
	// Controllers read the cluster's cache as soon as it is engaged: wait until it runs. No
	// informer exists yet, so this waits for the start alone, not for any list.
	startCtx, cancel := context.WithTimeout(engagedCtx, cacheStartTimeout)
	started := cl.GetCache().WaitForCacheSync(startCtx)
	cancel()
	if !started {
		disengage()
		return fmt.Errorf("the cache of cluster %s did not start within %s", m.name, cacheStartTimeout)
	}
	if err := p.applyIndexers(engagedCtx, cl); err != nil {
		disengage()
		return err
	}
	informer, err := cl.GetCache().GetInformer(engagedCtx, &corev1.Node{}, cache.BlockUntilSynced(false))
	if err != nil {
		disengage()
		return err
	}
	refresh := func(any) { p.refreshCapacity(engagedCtx, m, cl, informer) }
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    refresh,
		UpdateFunc: func(_, obj any) { refresh(obj) },
		DeleteFunc: refresh,
	}); err != nil {
		disengage()
		return err
	}
	m.mu.Lock()
	m.engaged, m.disengage = cl, disengage
	m.mu.Unlock()
	go func() {
		if toolscache.WaitForCacheSync(engagedCtx.Done(), informer.HasSynced) {
			refresh(nil)
		}
	}()
	if p.mgr != nil {
		if err := p.mgr.Engage(engagedCtx, multicluster.ClusterName(m.name), cl); err != nil {
			p.disengage(m)
			return err
		}
	}
	clusterEngaged.WithLabelValues(m.name).Set(1)
	stubReads.WithLabelValues(m.name) // from 0, so that rate() sees the first stub read
	log.Info("Engaged spoke")
	return nil
}

// disengage stops watching the spoke. It touches nothing on the spoke.
func (p *Provider) disengage(m *member) {
	m.mu.Lock()
	cancel := m.disengage
	wasEngaged := m.engaged != nil
	m.engaged, m.disengage, m.capacity = nil, nil, nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if wasEngaged {
		clusterEngaged.WithLabelValues(m.name).Set(0)
		p.log.Info("Disengaged spoke", "cluster", m.name)
	}
}

// refreshCapacity recomputes capacity from the Node cache once it has synced and notifies the
// status writer when it changed.
func (p *Provider) refreshCapacity(ctx context.Context, m *member, cl cluster.Cluster, informer cache.Informer) {
	if !informer.HasSynced() {
		return // engage refreshes once the initial list is in
	}
	var nodes corev1.NodeList
	if err := cl.GetCache().List(ctx, &nodes); err != nil {
		return
	}
	c := summarize(nodes.Items)
	m.mu.Lock()
	if m.engaged != cl {
		m.mu.Unlock()
		return
	}
	changed := m.capacity == nil || m.capacity.nodes != c.nodes || m.capacity.readyNodes != c.readyNodes ||
		!equality.Semantic.DeepEqual(m.capacity.allocatable, c.allocatable)
	m.capacity = &c
	m.mu.Unlock()
	if changed {
		p.notify(ctx, m.name)
	}
}
