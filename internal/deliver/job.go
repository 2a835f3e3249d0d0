package deliver

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Job is what one owner wants on one cluster.
type Job struct {
	Owner   render.Owner
	Cluster string
	// Objects are rendered and sorted for applying.
	Objects []*unstructured.Unstructured
	// Revision identifies Objects as a whole (render.Revision).
	Revision string
	// PruneKinds are the kinds to look in for objects of Owner that Objects no longer has.
	PruneKinds []schema.GroupVersionKind
	// Prune allows deleting such objects; false holds them (for example while the selectors
	// match nothing, which is more often a typo than an intent).
	Prune    bool
	Deletion flotillav1.DeletionPolicy
	Conflict flotillav1.ConflictPolicy
}

// Result is the outcome of the latest delivery of a Job.
type Result struct {
	// Revision is the job's revision; Complete says it is fully delivered (and pruned, if asked).
	Revision string
	Complete bool
	// Applied counts objects in their desired state; Failed those that are not.
	Applied int
	Failed  int
	// Ready counts objects that are ready on the cluster, as kstatus computes it from the
	// spoke cache (a Deployment Available and rolled out, a CRD Established, a ConfigMap at
	// once); NotReady describes the first one that is not.
	Ready    int
	NotReady string
	// Conflict is set when an object belongs to someone else.
	Conflict bool
	// Permanent is set when every failure is one the spoke will repeat for the same object
	// (it is invalid, too large, or forbidden): the delivery is retried only rarely until the
	// object changes on the hub.
	Permanent bool
	// Disconnected is set when the cluster is not engaged (not joined, not yet probed, or its
	// credentials are rejected); the delivery is retried with backoff.
	Disconnected bool
	// Message describes the first failures.
	Message string
}

// pairKey identifies a Job's owner on one cluster's queue.
type pairKey = render.Owner
