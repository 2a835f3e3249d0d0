package propagation

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ruleCache keeps each propagator's compiled overrides for its current generation: CEL
// compiles once per spec change, not once per reconcile.
type ruleCache struct {
	mu    sync.Mutex
	rules map[render.Owner]compiledRules
}

type compiledRules struct {
	generation int64
	rules      []override.Rule
}

func (c *ruleCache) get(p propagator) []override.Rule {
	if len(p.spec.Overrides) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rules == nil {
		c.rules = map[render.Owner]compiledRules{}
	}
	owner := p.owner()
	if cr, ok := c.rules[owner]; ok && cr.generation == p.obj.GetGeneration() {
		return cr.rules
	}
	rules := override.Compile(p.spec.Overrides)
	c.rules[owner] = compiledRules{generation: p.obj.GetGeneration(), rules: rules}
	return rules
}

func (c *ruleCache) forget(owner render.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rules, owner)
}

// clusterFacts returns what override rules may look at of a cluster, from the hub cache.
func clusterFacts(ctx context.Context, hub client.Reader, name string) override.Cluster {
	c := override.Cluster{Name: name}
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

// overridden returns the objects as one cluster gets them: every object the rules change is a
// copy, annotated with the rules' names and hashed again; the others are shared.
func overridden(rules []override.Rule, c override.Cluster, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		changed, names, err := override.Apply(rules, c, o)
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

// usersOfCluster maps a Cluster to the propagators whose overrides may depend on it.
func (r *Reconciler) usersOfCluster(ctx context.Context, _ client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	var props flotillav1.PropagationList
	if err := r.Hub.List(ctx, &props); err == nil {
		for i := range props.Items {
			if len(props.Items[i].Spec.Overrides) > 0 {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&props.Items[i])})
			}
		}
	}
	var cprops flotillav1.ClusterPropagationList
	if err := r.Hub.List(ctx, &cprops); err == nil {
		for i := range cprops.Items {
			if len(cprops.Items[i].Spec.Overrides) > 0 {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cprops.Items[i])})
			}
		}
	}
	return reqs
}
