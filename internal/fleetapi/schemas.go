package fleetapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// snapshotTTL is how long one read of a cluster's /openapi/v3 root serves every RGD compiled
// for that cluster: a burst of reconciles costs one GET per cluster, and a cluster where a
// kind was missing is looked at again within it.
const snapshotTTL = 5 * time.Second

// schemaReadTimeout bounds each discovery and /openapi/v3 request to a spoke.
const schemaReadTimeout = 15 * time.Second

// snapshots keeps, per engaged cluster, a recent view of what the cluster serves: the
// /openapi/v3 root, which names every group-version with the hash of its document, and a
// discovery client that caches what the compiles of that view read through it (the documents
// of the group-versions an RGD uses, the REST mappings). A compile is then a function of the
// RGD and the view, and the view's fingerprint for an RGD says when it must be compiled again.
type snapshots struct {
	mu        sync.Mutex
	byCluster map[string]*snapshot
	now       func() time.Time
}

// snapshot is one cluster's view at one moment.
type snapshot struct {
	engaged   cluster.Cluster // the engagement it was read through
	at        time.Time
	discovery discovery.CachedDiscoveryInterface

	once  sync.Once
	paths map[string]string // group-version path ("apis/apps/v1", "api/v1") → its URL with hash
	err   error
}

func newSnapshots() *snapshots {
	return &snapshots{byCluster: map[string]*snapshot{}, now: time.Now}
}

// get returns a view of the cluster no older than snapshotTTL, read through its current
// engagement; concurrent callers share one read.
func (s *snapshots) get(name string, engaged cluster.Cluster) (*snapshot, error) {
	s.mu.Lock()
	sn, ok := s.byCluster[name]
	if !ok || sn.engaged != engaged || s.now().Sub(sn.at) >= snapshotTTL {
		var err error
		if sn, err = newSnapshot(engaged.GetConfig(), s.now()); err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("discovery client for cluster %s: %w", name, err)
		}
		sn.engaged = engaged
		s.byCluster[name] = sn
	}
	s.mu.Unlock()
	sn.once.Do(sn.readRoot)
	return sn, sn.err
}

// newSnapshot starts a view, at a moment, of the cluster cfg reaches; its root is read once,
// on first use (readRoot).
func newSnapshot(cfg *rest.Config, at time.Time) (*snapshot, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = schemaReadTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &snapshot{at: at, discovery: memory.NewMemCacheClient(dc)}, nil
}

// forget drops a cluster's view (the cluster left).
func (s *snapshots) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byCluster, name)
}

func (sn *snapshot) readRoot() {
	paths, err := sn.discovery.OpenAPIV3().Paths()
	if err != nil {
		sn.err = fmt.Errorf("read /openapi/v3: %w", err)
		return
	}
	sn.paths = make(map[string]string, len(paths))
	for p, gv := range paths {
		sn.paths[p] = gv.ServerRelativeURL()
	}
}

// fingerprint identifies what this view holds of the group-versions of kinds: the hash of
// each one's OpenAPI document, or its absence. It changes when a CRD the kinds belong to is
// installed, removed or changed on the cluster, and not when anything else there changes.
func (sn *snapshot) fingerprint(kinds []schema.GroupVersionKind) string {
	seen := map[string]bool{}
	var parts []string
	for _, gvk := range kinds {
		p := openAPIPath(gvk.GroupVersion())
		if seen[p] {
			continue
		}
		seen[p] = true
		url, ok := sn.paths[p]
		if !ok {
			url = "absent"
		}
		parts = append(parts, p+"="+url)
	}
	sort.Strings(parts)
	sum := sha256.New()
	for _, p := range parts {
		sum.Write([]byte(p))
		sum.Write([]byte{0})
	}
	return hex.EncodeToString(sum.Sum(nil))[:16]
}

// target is the view as kro's compiler reads it.
func (sn *snapshot) target() kro.Target { return kro.TargetForDiscovery(sn.discovery) }

// openAPIPath is a group-version's path in the /openapi/v3 root.
func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}
