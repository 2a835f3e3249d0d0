package instances

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// deletionJob removes an instance's children, from its ApplySet inventory and nothing else, in
// reverse apply order (the highest wave first, each gone before the next), then releases its
// finalizer; meanwhile it shows DELETING. An inventory kro would refuse blocks the deletion,
// saying why, and nothing is deleted. An instance served cluster-wide (clusterWide) removes its
// children wherever they are on its cluster, as it delivered them; a confined one, only those in
// its namespace.
func deletionJob(owner render.Owner, instance *unstructured.Unstructured, authorConditions, clusterWide bool, kindOf kindOf) (deliver.Job, error) {
	job := deliver.Job{Owner: owner, Cluster: owner.Cluster, Revision: render.Revision(nil)}
	kinds, invalid := kro.DeletionInventory(instance)
	var pruneKinds []schema.GroupVersionKind
	if invalid == nil {
		var err error
		if pruneKinds, err = servedKinds(kinds, kindOf); err != nil {
			return deliver.Job{}, err
		}
	}
	job.Status = []*unstructured.Unstructured{withStatus(instance, kro.DeletingStatus(instance, authorConditions, invalid))}
	if invalid != nil {
		return job, nil
	}
	release := identity(instance)
	release.SetFinalizers([]string{kro.Finalizer})
	job.PruneKinds = pruneKinds
	job.Prune = true
	job.PruneOrder = kro.ApplyOrderAnnotation
	job.Strategy = decide.Strategy{PruneBudget: decide.Unbudgeted, ClusterWide: clusterWide}
	job.OwnerMeta = &deliver.OwnerMeta{Object: release, Release: true}
	return job, nil
}
