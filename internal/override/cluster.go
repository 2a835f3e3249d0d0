package override

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/render"
)

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

// LimitsOf returns the placement limits of the clusters that have some.
func LimitsOf(facts map[string]Cluster) map[string]division.Usage {
	out := map[string]division.Usage{}
	for c, f := range facts {
		if len(f.Limits) > 0 {
			out[c] = f.Limits
		}
	}
	return out
}
