// Package revisions keeps the history of what an owner renders: each distinct set of rendered
// objects is stored once per owner (not per cluster) as an apps/v1 ControllerRevision in the
// owner's namespace, owned by the owner, numbered in order, with a bounded history.
//
// A Delivery record can pin its cluster to a kept revision (spec.revision): that cluster then
// gets, and is corrected back to, the objects of that revision while the others follow the
// owner. This is the mechanism rollouts stage changes with; choosing which cluster gets which
// revision when is not this package's job.
//
// A revision holds the rendered objects before per-cluster overrides, as JSON, gzip-compressed
// when large. It never holds Secret data (secrets.go): Kubernetes' `view` role reads
// ControllerRevisions but not Secrets. A Secret is kept without data and stringData, with the
// hub object its values come from (the selected Secret, or the manifest that carries it);
// Load reads them there again and uses them only if the Secret is then exactly what the
// revision delivered (its render hash), failing with ErrSecretNotAsKept otherwise. One whose compressed form would not fit comfortably in etcd is not stored: the
// owner then delivers without history, and says so.
package revisions
