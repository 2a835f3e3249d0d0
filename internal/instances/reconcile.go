package instances

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// reconcile expands one instance on one cluster: it reads the instance from its informer and
// its children from the spoke cache, evaluates it with kro, and submits the result to the
// deliverer, which writes only what differs. It never writes to the spoke itself.
func (c *Controller) reconcile(ctx context.Context, req request) error {
	cluster := string(req.ClusterName)
	s := c.spoke(cluster)
	if s == nil {
		return nil // not engaged: engaging it lists every instance again
	}
	g, served := c.graphs.Graph(cluster, req.Request.Kind)
	if !served {
		return nil // stopped being served: sync stopped its jobs
	}
	instance, watched, err := s.instance(req.Request.Kind, req.Request.Namespace, req.Request.Name)
	if err != nil || !watched {
		return err // not watched yet: its informer's events bring the instance
	}
	owner := ownerOf(req)
	if instance == nil {
		s.useExternals(req.Request, nil)
		c.forget(owner)
		return nil
	}
	kindOf := spokeKinds(s)
	instance = c.withShownStatus(owner, instance)
	if instance.GetDeletionTimestamp() != nil {
		s.useExternals(req.Request, nil) // deletion reads no references
		if !hasFinalizer(instance) {
			c.forget(owner) // not Flotilla's to clean up, or cleaned up already
			return nil
		}
		job, err := deletionJob(owner, instance, g.Compiled.HasAuthorConditions(), g.ClusterWide, kindOf)
		if err != nil {
			return err
		}
		c.submit(req, instance, job)
		return nil
	}
	previous, hasPrevious := c.deliverer.Result(owner, cluster)
	observer := &cacheObserver{ctx: ctx, cl: s.cl, namespace: instance.GetNamespace(), clusterWide: g.ClusterWide,
		externals: externalKinds(g.Compiled), namespaced: namespacedKinds(g.Compiled),
		takeover: takeoverMark(instance, hasPrevious && !c.recentlySubmitted(owner)), used: map[externalKey]bool{},
		external: func(ctx context.Context, key externalKey, resource schema.GroupVersionResource) (*externalWatch, error) {
			return c.external(ctx, s, req.Request, key, resource)
		}}
	plan, err := kro.Evaluate(ctx, g.Compiled, instance, observer)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	s.useExternals(req.Request, observer.used)
	x := expansion{owner: owner, instance: instance, childKinds: childKinds(g.Compiled), plan: plan,
		previous: previous, hasPrevious: hasPrevious, kindOf: kindOf, clusterWide: g.ClusterWide}
	if !g.Compiled.Namespaced() && !g.ClusterWide {
		x.refused = clusterScopedRefusal
	}
	job, err := x.job()
	if err != nil {
		return err
	}
	c.submit(req, instance, job)
	if hasPrevious && previous.Complete && previous.Revision == job.Revision && lacksMeta(instance, job.OwnerMeta) {
		// Delivered, yet the instance lacks its metadata: someone took it away (kro puts it
		// back too). The deliverer confirmed it before and would not look again.
		c.deliverer.Recheck(owner, cluster)
	}
	if plan.Err != nil && x.refused == "" {
		// Its status says why; look again (processNext says when), as kro does: a read that
		// failed may succeed later.
		return fmt.Errorf("the pass stopped: %w", plan.Err)
	}
	return nil
}

// spokeKinds maps group-kinds to the version the spoke prefers, through its REST mapper.
func spokeKinds(s *spoke) kindOf {
	return func(gk schema.GroupKind) (schema.GroupVersionKind, bool, error) {
		m, err := s.cl.GetRESTMapper().RESTMapping(gk)
		switch {
		case meta.IsNoMatchError(err):
			return schema.GroupVersionKind{}, false, nil
		case err != nil:
			return schema.GroupVersionKind{}, false, err
		}
		return m.GroupVersionKind, true, nil
	}
}
