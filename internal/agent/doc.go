// Package agent is `flotilla agent`: pull mode's spoke side. It runs on (or next to) a spoke
// the hub cannot reach, with the spoke's credentials and a credential of its own hub identity
// (the ServiceAccount flotilla-system/agent-<cluster>), and keeps the spoke running what the
// hub says the cluster must run.
//
// The hub credential is either a token file for the work endpoint's audience
// (flotilla.dev/work), read for every request, or the hub kubeconfig `flotilla join --mode
// pull` writes, in a file or a Secret on the spoke (store.go, renew.go): a token for the hub
// API server with which the agent requests its work tokens (one hour, by the TokenRequest API
// on its own ServiceAccount, the one thing its Role allows) and renews that credential, each
// once 80% of its life has passed (a work token also at once after a 401), writing the
// renewed kubeconfig back (a file atomically, a Secret only over the version it read). The
// timing takes the clock as an input. No token is ever logged.
//
// It asks the hub's work endpoint (package clusterwork) for the cluster's work with
// If-None-Match and asks the hub to hold the request while the work is unchanged, for up to
// PollInterval: a change is answered as soon as the hub has it, and an idle cluster costs one
// small request and a 304 per interval. Results that change meanwhile are posted without
// waiting for the answer; after new work it asks again at once. Each owner's
// work is submitted to the same delivery engine push mode uses (package deliver: server-side
// apply under Flotilla's field manager, ownership marks, tenancy checks, drift correction from
// the spoke's own watches, prune rules and budgets), engaged on the local spoke alone with the
// cache an engaged spoke has on the hub (inventory.LocalCluster) and its flow control (package
// spokeclient: no client-side rate limit, the spoke's answers set the pace). The latest result of each
// owner is posted back to POST /clusters/{cluster}/results when it changes, and the hub writes
// it into the owner's Delivery record of the cluster through its ledger.
//
// Disconnection is safe. When the hub does not answer, or answers with an error, nothing
// changes on the spoke: the last work stays applied and drift-corrected (the engine's watches
// are the spoke's own), nothing is deleted, and results wait to be posted. After
// unreachableAfter (3) failed polls in a row the agent says so once, in its log and with a
// Warning Event HubUnreachable on its spoke, and once more with a Normal Event HubReachable when
// the hub answers again, both naming the last successful contact (signal.go). The Events are
// about the agent's Pod when POD_NAME and POD_NAMESPACE are set, else about its ConfigMap
// (below): `kubectl get events -n flotilla-system` shows them. A token file is read again for
// every request, so a rotated projected token is used as soon as it is on disk; a revoked
// identity (unjoined) is just a hub that refuses. An owner is
// removed only when the hub answers successfully and leaves it out of the work, at least
// RemovalGrace (default 10 minutes) after the first successful answer that left it out; a
// failed request never counts toward that grace, and the removal is the engine's (only objects
// carrying the owner's marks, adopted objects released rather than deleted, the owner's
// deletion policy kept). An owner whose work the hub cannot resolve now (Pending) keeps what it
// runs, and so does an owner whose record the hub serves at a generation older than the one
// the spoke runs (a hub replica whose cache lags).
//
// Restarts are safe too. What the agent delivered is kept on the spoke, in the ConfigMap
// MemoryName in its namespace (memory.go): per owner, its Delivery record, every kind it
// delivered and its deletion policy, written before a job delivers a kind it does not list. A
// restarted agent (SIGKILL included) reads it before its first poll: an owner the hub's first
// successful answer lists is delivered again whole, pruning the remembered kinds too; one it
// leaves out (deleted on the hub while the agent was down) is removed after the grace, counted
// from that answer, so a crash loop only ever delays a removal. The engine deletes nothing of
// an owner it has not been asked to remove, and never an object without the owner's marks.
//
// Fleet APIs (fleetapis.go): an item owned by an RGD names the RGD revision the hub planned for
// the cluster and resolves to that RGD with the hub's tenancy. The agent compiles it against
// its own spoke with the hub's compile path (fleetapi.Spoke), and the owner's job is the CRD,
// delivered, remembered and removed as any owner's; once the deliverer reports the CRD
// Established its graph is served to an instances controller (package instances) engaged on
// this spoke alone, which expands the instances created there through the same deliverer. An
// RGD that may not be served here is reported with its reason (clusterwork.Result.Reason) and
// planned again every apiRetryInterval; the spoke keeps what it served, and the graph served
// before while the agent runs.
//
// A prune beyond an owner's budget waits, as the hub's deliveries do, for the owner's
// flotilla.dev/confirm-prune on the hub, which each item carries (Item.PruneConfirmed).
//
// What the agent does not do yet: the deletion of a fleet API's CRD that still has instances
// waits (it reads no confirmation for it, and cleans up no instances before their CRD goes);
// a restarted agent has no graph for an RGD whose newest revision it refuses (that RGD's
// instances wait until it compiles); and it reports counts and readiness, not the status of
// the objects it delivers (the hub counts a pull cluster's transparent workload from its
// readiness: package transparent; it counts no fleet API instances there).
package agent
