// Package override changes rendered objects per cluster, as an owner's overrides say (a
// Propagation's spec.overrides, or the Placement's for the transparent-mode objects that use
// it; package percluster applies them for every owner kind): RFC 6902 JSON patches, RFC 7386 merge patches, and CEL expressions that compute one field
// from the cluster (name, labels, allocatable capacity) and the object.
//
// Rules are compiled once per generation of the object that carries them (Compile) and applied per cluster and
// object (Apply). A rule that cannot compile or fails to apply is an error naming the rule,
// for the clusters it matches only: the caller fails those clusters and carries on with the
// others. The package is pure: the caller reads the cluster (Cluster) and hands it over.
//
// Rules never read or change Secrets (secrets.go): they run with the controller's rights, and
// their author may not be allowed to read Secrets. A rule that names no kind passes Secrets
// by; one that names the Secret kind is refused.
package override
