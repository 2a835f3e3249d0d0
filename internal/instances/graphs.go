package instances

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// Graph is an RGD compiled for one cluster: what instances of its kind are expanded with there.
type Graph struct {
	Compiled *kro.Compiled
	// Revision identifies the RGD revision the cluster serves (its pin): a new one makes every
	// instance of the kind there be evaluated again.
	Revision string
	// ClusterWide lets the instances reach anywhere on their cluster (the API is served with
	// tenancy Cluster): children in other namespaces and of cluster-scoped kinds, and external
	// references anywhere. Otherwise an instance is confined to its namespace.
	ClusterWide bool
}

// Kind is the instances' kind.
func (g Graph) Kind() schema.GroupVersionKind { return g.Compiled.InstanceKind() }

// Graphs is what this package needs of the side that serves fleet APIs (RGD placement,
// per-cluster compilation, CRD delivery): which kinds each cluster serves, with which graph,
// and when that changes. A kind is served on a cluster once its CRD is Established there.
type Graphs interface {
	// Served returns the graphs served on a cluster.
	Served(cluster string) []Graph
	// Graph returns the graph of a kind on a cluster, if the cluster serves it.
	Graph(cluster string, kind schema.GroupVersionKind) (Graph, bool)
	// Subscribe registers fn, called with a cluster's name whenever what the cluster serves
	// changes: a kind starts or stops being served, or its graph changes. fn does not block,
	// and is never called while the Graphs holds a lock.
	Subscribe(fn func(cluster string))
}

// Memory is a Graphs held in memory: what tests register, and what the RGD side can fill.
type Memory struct {
	mu          sync.Mutex
	served      map[string]map[schema.GroupVersionKind]Graph
	subscribers []func(string)
}

var _ Graphs = (*Memory)(nil)

// NewMemory returns an empty Memory: nothing served anywhere.
func NewMemory() *Memory {
	return &Memory{served: map[string]map[schema.GroupVersionKind]Graph{}}
}

// Serve makes a cluster serve g's kind with g, replacing the graph it served for that kind.
// Serving the same revision again changes nothing.
func (m *Memory) Serve(cluster string, g Graph) {
	m.serveKind(cluster, g.Kind(), g)
}

func (m *Memory) serveKind(cluster string, kind schema.GroupVersionKind, g Graph) {
	m.mu.Lock()
	kinds := m.served[cluster]
	if kinds == nil {
		kinds = map[schema.GroupVersionKind]Graph{}
		m.served[cluster] = kinds
	}
	old, had := kinds[kind]
	kinds[kind] = g
	m.mu.Unlock()
	if !had || old != g {
		m.changed(cluster)
	}
}

// Unserve stops a cluster serving a kind.
func (m *Memory) Unserve(cluster string, kind schema.GroupVersionKind) {
	m.mu.Lock()
	_, had := m.served[cluster][kind]
	delete(m.served[cluster], kind)
	m.mu.Unlock()
	if had {
		m.changed(cluster)
	}
}

// Clusters returns the clusters that serve kind, sorted.
func (m *Memory) Clusters(kind schema.GroupVersionKind) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for cluster, kinds := range m.served {
		if _, ok := kinds[kind]; ok {
			out = append(out, cluster)
		}
	}
	slices.Sort(out)
	return out
}

// Served implements Graphs.
func (m *Memory) Served(cluster string) []Graph {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Graph, 0, len(m.served[cluster]))
	for _, g := range m.served[cluster] {
		out = append(out, g)
	}
	return out
}

// Graph implements Graphs.
func (m *Memory) Graph(cluster string, kind schema.GroupVersionKind) (Graph, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.served[cluster][kind]
	return g, ok
}

// Subscribe implements Graphs.
func (m *Memory) Subscribe(fn func(cluster string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subscribers = append(m.subscribers, fn)
}

func (m *Memory) changed(cluster string) {
	m.mu.Lock()
	subscribers := append([]func(string){}, m.subscribers...)
	m.mu.Unlock()
	for _, fn := range subscribers {
		fn(cluster)
	}
}
