package deliver

import "k8s.io/apimachinery/pkg/runtime/schema"

// ReadsDirectly reports whether the deliverer reads a kind on a cluster from its API server
// rather than its spoke cache (spokeread.go).
func ReadsDirectly(d *Deliverer, cluster string, gvk schema.GroupVersionKind) bool {
	w, ok := d.existingWorker(cluster)
	return ok && w.bypass.active(gvk)
}
