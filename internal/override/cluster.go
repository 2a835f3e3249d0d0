package override

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ClusterFacts returns what override rules may look at of a cluster, from the hub cache.
func ClusterFacts(ctx context.Context, hub client.Reader, name string) Cluster {
	c := Cluster{Name: name}
	cl := &flotillav1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
		return c
	}
	c.Labels = cl.Labels
	c.Allocatable = map[string]int64{}
	if q, ok := cl.Status.Allocatable[corev1.ResourceCPU]; ok {
		c.Allocatable["cpu"] = q.MilliValue()
	}
	if q, ok := cl.Status.Allocatable[corev1.ResourceMemory]; ok {
		c.Allocatable["memory"] = q.Value()
	}
	if q, ok := cl.Status.Allocatable[corev1.ResourcePods]; ok {
		c.Allocatable["pods"] = q.Value()
	}
	return c
}

// FactsChanged passes the Cluster events that change what rules see of a cluster: its labels
// and its allocatable capacity.
func FactsChanged() predicate.Predicate {
	return predicate.Or(predicate.LabelChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, okO := e.ObjectOld.(*flotillav1.Cluster)
		n, okN := e.ObjectNew.(*flotillav1.Cluster)
		return okO && okN && !equality.Semantic.DeepEqual(o.Status.Allocatable, n.Status.Allocatable)
	}})
}

// ForCluster returns the objects as one cluster gets them: every object the rules change is a
// copy, annotated with the rules' names and hashed again; the others are shared.
func ForCluster(rules []Rule, c Cluster, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		changed, names, err := Apply(rules, c, o)
		if err != nil {
			return nil, err
		}
		if names != nil {
			a := changed.GetAnnotations()
			a[flotillav1.AnnotationOverrides] = strings.Join(names, ",")
			changed.SetAnnotations(a)
			if _, err := render.Rehash(changed); err != nil {
				return nil, err
			}
		}
		out[i] = changed
	}
	return out, nil
}

// Cache keeps compiled rules per object and generation: CEL compiles once per spec change,
// not once per reconcile.
type Cache struct {
	mu    sync.Mutex
	rules map[string]compiled
}

type compiled struct {
	generation int64
	rules      []Rule
}

// Get returns the compiled rules of the object with this key at this generation.
func (c *Cache) Get(key string, generation int64, overrides []flotillav1.Override) []Rule {
	if len(overrides) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cr, ok := c.rules[key]; ok && cr.generation == generation {
		return cr.rules
	}
	if c.rules == nil {
		c.rules = map[string]compiled{}
	}
	rules := Compile(overrides)
	c.rules[key] = compiled{generation: generation, rules: rules}
	return rules
}

// Forget drops the rules of an object.
func (c *Cache) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rules, key)
}
