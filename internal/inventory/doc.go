// Package inventory is the first stage of Flotilla's pipeline: it turns Cluster objects on the
// hub into engaged spokes and tells the truth about each spoke's health and capacity.
//
// It is a sigs.k8s.io/multicluster-runtime Provider. A Cluster whose credentials Secret holds a
// usable kubeconfig gets a prober; once a probe succeeds, the spoke is engaged, so every other
// Flotilla controller starts watching it through mcmanager. Rotated credentials (a changed
// Secret) re-engage the spoke without a restart. A deleted Cluster or Secret, or credentials the
// spoke rejects, disengage it: disengaging cancels watches and never deletes anything on the
// spoke. An unreachable spoke stays engaged so that its watches resume the moment it returns.
//
// Health comes from a cheap probe (GET /readyz; /version now and then) on an interval;
// capacity comes from a watch on the spoke's Nodes, never from listing them per probe. One
// reconciler writes Cluster status, and only when what it would write differs from what is
// there: a steady fleet causes no writes to the hub. Probe freshness is exported as metrics.
//
// Tokens expire, and the hub renews the ones `flotilla join` wrote: when less than a third of
// a token's lifetime is left (Options.RenewWhenRemaining), the prober asks the spoke's
// TokenRequest API, as Flotilla's own ServiceAccount, for a new token bound to the same spoke
// Secret and writes it into the credentials Secret, which then re-engages the spoke like any
// rotation. Other Secrets are never written; their tokens' expiry is only reported. The
// CredentialsValid condition and the metric flotilla_cluster_credential_expiry_seconds say
// how long the credentials have left (renew.go).
//
// Every client of a spoke (its cache and client, the deliverer's applier, the probe, renewal)
// shares the spoke's spokeclient.Flow: no client-side rate limit, a bounded number of requests
// in flight that follows what the spoke answers. The Flow outlives credential rotations and
// goes, with its metrics, when the Cluster does.
//
// Each engaged spoke's cache selects the objects carrying Flotilla's owner label, which any
// spoke user can write, and keeps whole only those of known owners (Options.Owners, the
// internal/owners registry) where those owners deliver, within a byte bound per cluster
// (Options.CacheBytesPerCluster); any other is a small stub, and a read that meets a stub is
// answered by the spoke (spokecache.go). Spokes are engaged once the registry's hub sources have
// synced, so a restart stubs no delivered object. The flotilla_spoke_cache_* metrics say what
// each cache holds. A watch of the cache that fails (a kind the spoke no longer serves, a grant
// that no longer allows it, a spoke that does not answer) is logged once per kind with the
// cluster's name and retried quietly, so it resumes by itself (watcherrors.go).
//
// Credentials never leave this package: they are read with an uncached GET when needed, the
// hub cache holds Secrets as metadata only, and no error, condition, Event or metric carries
// them.
package inventory
