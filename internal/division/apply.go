package division

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Pass is what the chosen clusters get of an owner's divided workloads in one pass: each
// workload's replicas, and the bounds of the HPAs that scale them (hpa.go). It is computed
// once for all clusters, since an HPA's bounds on one cluster depend on every cluster's share.
type Pass struct {
	// Replicas are each divided workload's replicas on each cluster (render.Key, cluster).
	Replicas Replicas
	// bounds are, for each HPA that scales a divided workload (render.Key), its bounds on each
	// cluster that runs some of the workload; a cluster missing does not get the HPA.
	bounds map[string]map[string]Bounds
	// scaled are the divided workloads an HPA scales (render.Key).
	scaled map[string]bool
}

// NewPass is the pass that gives the clusters these replicas of the divided workloads among
// objs. objs are the owner's objects, or more: an HPA among them that scales one of the
// workloads in replicas gets divided bounds, and the workload the share annotation, whichever
// of them a later Apply is given.
func NewPass(objs []*unstructured.Unstructured, replicas Replicas) Pass {
	p := Pass{Replicas: replicas}
	for _, o := range objs {
		a, ok := autoscalerOf(o)
		if !ok {
			continue
		}
		shares, divided := replicas[a.target]
		if !divided {
			continue
		}
		if p.bounds == nil {
			p.bounds, p.scaled = map[string]map[string]Bounds{}, map[string]bool{}
		}
		key := render.Key(o)
		p.bounds[key] = DivideBounds(a.min, a.max, shares, key)
		p.scaled[a.target] = true
	}
	return p
}

// On returns a cluster's replicas of every workload.
func (p Pass) On(cluster string) map[string]int64 { return p.Replicas.On(cluster) }

// Apply returns a cluster's copies of objs: a divided workload with its replicas there (and,
// when an HPA scales it, the share annotation saying so), an HPA of a divided workload with its
// bounds there, or left out where the cluster runs none of the workload; changed objects are
// rehashed, the others returned as they are, and objs is not modified.
func (p Pass) Apply(objs []*unstructured.Unstructured, cluster string) ([]*unstructured.Unstructured, error) {
	if len(p.Replicas) == 0 {
		return objs, nil
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		key := render.Key(o)
		if byCluster, scaled := p.bounds[key]; scaled {
			b, delivered := byCluster[cluster]
			if !delivered {
				continue // no share here: an HPA would wake a standby
			}
			c, err := setBounds(o, b)
			if err != nil {
				return nil, fmt.Errorf("%s: set the HPA's bounds: %w", key, err)
			}
			out = append(out, c)
			continue
		}
		n, divided := p.Replicas[key][cluster]
		if !divided {
			out = append(out, o)
			continue
		}
		c, err := p.setReplicas(o, key, n)
		if err != nil {
			return nil, fmt.Errorf("%s: set spec.replicas: %w", key, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// setReplicas returns a copy of a divided workload with n replicas, rehashed; one an HPA scales
// there also carries n as its share annotation.
func (p Pass) setReplicas(o *unstructured.Unstructured, key string, n int64) (*unstructured.Unstructured, error) {
	c := o.DeepCopy()
	if err := unstructured.SetNestedField(c.Object, n, "spec", "replicas"); err != nil {
		return nil, err
	}
	if p.scaled[key] && n > 0 {
		annotations := c.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[flotillav1.AnnotationShare] = strconv.FormatInt(n, 10)
		c.SetAnnotations(annotations)
	}
	return render.Rehash(c)
}
