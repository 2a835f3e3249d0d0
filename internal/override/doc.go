// Package override changes rendered objects per cluster, as a Propagation's overrides say:
// RFC 6902 JSON patches, RFC 7386 merge patches, and CEL expressions that compute one field
// from the cluster (name, labels, allocatable capacity) and the object.
//
// Rules are compiled once per Propagation generation (Compile) and applied per cluster and
// object (Apply). A rule that cannot compile or fails to apply is an error naming the rule,
// for the clusters it matches only: the caller fails those clusters and carries on with the
// others. The package is pure.
//
// Rules never read or change Secrets (secrets.go): they run with the controller's rights, and
// their author may not be allowed to read Secrets. A rule that names no kind passes Secrets
// by; one that names the Secret kind is refused.
package override
