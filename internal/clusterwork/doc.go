// Package clusterwork serves a pull-mode agent its cluster's work: the hub side of pull mode.
//
// A cluster the hub cannot reach runs an agent that reads what the cluster must run from the
// hub. RBAC cannot grant that read: Delivery records and the revisions they name live in their
// owners' namespaces, with every other cluster's. So the hub serves it (flotilla hub
// --work-bind-address), and the ledger stays the only writer of records.
//
// GET /clusters/{cluster}/work
//
//   - authenticates the bearer token with a TokenReview against the hub, for the audience
//     Audience (a token for the hub API server itself is refused), answers remembered for
//     CacheTTL; no token or a token the hub refuses: 401;
//   - serves only cluster's agent, the ServiceAccount membership.AgentServiceAccount(cluster)
//     in flotilla-system as membership.GrantAgent made it (labelled for the cluster, and the
//     token's UID its UID: identity.go); anyone else, whatever they may read on the hub: 403.
//     A cluster name that is not a DNS-1123 label: 400;
//   - serves at most MaxInFlight requests at once, the others 429 with Retry-After before
//     their token is reviewed (limits.go);
//   - serves only while the hub keeps Delivery records to its controller: the
//     ValidatingAdmissionPolicy install.DeliveryPolicyName and its binding exist and the binding
//     denies (looked at again at most every ProtectionInterval); otherwise 503, saying how to
//     install the policy;
//   - lists the cluster's Delivery records (label flotilla.dev/cluster, every namespace) from
//     the hub cache, keeps those the ledger wrote for a live owner (ledger.Trust, counted as
//     reader "agent" when ignored), and returns, per record, its owner, revision, digest and
//     strategy, the record's UID and generation (an agent never goes back to an older generation of
//     a record, which a lagging replica could serve), and the objects revisions.Store.Work resolves (Secrets with their data, read
//     again from their sources). A record with no spec.work yet, or whose work cannot be
//     resolved now, is listed with the reason (Pending), not dropped. So is a record whose
//     changes would make an object the revision lacks (work.Confined): the hub writes none,
//     and it is counted and logged as ignored;
//   - answers with an ETag over the trusted records' UIDs and generations (spec changes, not
//     status writes) and honours If-None-Match with 304 Not Modified, so an idle agent costs
//     one small request and no revision read per poll. A response with an unresolved record
//     carries no ETag: the next poll resolves again.
//   - with If-None-Match and ?waitSeconds=N (at most MaxWait), holds a request whose work is
//     unchanged until one of the cluster's records changes (its spec, added or deleted, seen by
//     the hub cache's informer: changes.go) or N seconds pass, so a change reaches an agent as
//     soon as the hub has it, and an idle agent costs one request per N seconds; a held request
//     gives its place among those in flight back while it waits;
//   - answers 503 (retry), not 401, when a token cannot be reviewed because the hub API server
//     does not answer;
//
// The response holds Secret data and goes to the authorized agent only (Cache-Control:
// no-store); objects are never logged. Without TLS the endpoint is for a loopback address and
// development only (the hub refuses anything else).
//
// POST /clusters/{cluster}/results
//
//   - authenticates and authorizes as GET does (the cluster's agent alone);
//   - takes per-record results (Results: revision, counts, message, and for a result that is not
//     complete a one-word reason such as SchemaNotFound; never objects), at most
//     MaxResultsBytes;
//   - writes each into the record through the ledger (Reporter: ledger.Ledger.WriteReported),
//     only when the record is one of the cluster's that ledger.Trust believes and its
//     spec.work.digest is the result's revision, with the objects the record's own work
//     resolves to; anything else is skipped with its reason (Written). Each owner whose record
//     took a result is notified, so its controller counts the cluster again.
//
// The agent is package agent (flotilla agent).
package clusterwork
