package deliver

import (
	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The rules deliveries follow, for `flotilla plan` to show what a delivery would do.

// Describe names an object as deliveries report it: kind.group namespace/name.
func Describe(o *unstructured.Unstructured) string { return describe(o) }

// CheckOwner returns why a delivery of job would refuse to touch live (it belongs to someone
// else), or nil.
func CheckOwner(live metav1.Object, job Job) error { return checkOwner(live, job) }

// OverBudget reports whether deleting stale of the owner's owned objects would wait for
// confirmation.
func OverBudget(job Job, stale, owned int) bool { return overBudget(job, stale, owned) }

// ModeOf is an object's apply mode under a job: its annotation, else the job's.
func ModeOf(obj *unstructured.Unstructured, job Job) flotillav1.ApplyMode { return modeOf(obj, job) }

// DriftOf is an object's drift policy under a job: its annotation, else the job's.
func DriftOf(obj *unstructured.Unstructured, job Job) flotillav1.DriftPolicy {
	return driftOf(obj, job)
}

// CheckScope returns why a delivery of job would refuse obj on a cluster with this REST
// mapping (a namespaced owner's object that is cluster-scoped there, or in another namespace).
func CheckScope(job Job, obj *unstructured.Unstructured, mapper meta.RESTMapper) error {
	if job.Owner.Namespace == "" {
		return nil
	}
	scope, err := scopeOf(mapper, obj)
	if err != nil {
		return err
	}
	return checkScope(job.Owner, obj, scope)
}
