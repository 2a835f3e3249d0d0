// Package agent is `flotilla agent`: pull mode's spoke side. It runs on (or next to) a spoke
// the hub cannot reach, with the spoke's credentials and a token of its own hub identity (the
// ServiceAccount flotilla-system/agent-<cluster>, audience flotilla.dev/work), and keeps the
// spoke running what the hub says the cluster must run.
//
// Every PollInterval it asks the hub's work endpoint (package clusterwork) for the cluster's
// work with If-None-Match, so an idle cluster costs one small request and a 304. Each owner's
// work is submitted to the same delivery engine push mode uses (package deliver: server-side
// apply under Flotilla's field manager, ownership marks, tenancy checks, drift correction from
// the spoke's own watches, prune rules and budgets), engaged on the local spoke alone with the
// cache an engaged spoke has on the hub (inventory.LocalCluster). The latest result of each
// owner is posted back to POST /clusters/{cluster}/results when it changes, and the hub writes
// it into the owner's Delivery record of the cluster through its ledger.
//
// Disconnection is safe. When the hub does not answer, or answers with an error, nothing
// changes on the spoke: the last work stays applied and drift-corrected, nothing is deleted,
// and the agent logs that it keeps the last work (once when the hub goes away, once when it
// returns). The token file is read again for every request, so a rotated projected token is
// used as soon as it is on disk. An owner is removed only when the hub answers successfully
// and leaves it out of the work, at least RemovalGrace (default 10 minutes) after the first
// successful answer that left it out; a failed request never counts toward that grace, and
// the removal is the engine's (only objects carrying the owner's marks, adopted objects
// released rather than deleted, the owner's deletion policy kept). An owner whose work the
// hub cannot resolve now (Pending) keeps what it runs.
//
// Fleet APIs (fleetapis.go): an item owned by an RGD names the RGD revision the hub planned for
// the cluster and resolves to that RGD with the hub's tenancy. The agent compiles it against
// its own spoke with the hub's compile path (fleetapi.Spoke), and the owner's job is the CRD,
// delivered and removed as any owner's; once the deliverer reports the CRD Established its
// graph is served to an instances controller (package instances) engaged on this spoke alone,
// which expands the instances created there through the same deliverer. An RGD that may not be
// served here is reported with its reason (clusterwork.Result.Reason) and planned again every
// apiRetryInterval; the spoke keeps what it served, and the graph served before while the agent
// runs.
//
// What the agent does not do yet: it keeps what it delivered in memory only (a restarted agent
// learns its owners from the next answer, prunes kinds an owner dropped only if it saw the
// owner deliver them since it started, and has no graph for an RGD whose new revision it
// refuses); it cleans up no fleet API instances before their CRD is deleted (a CRD with
// instances waits for a confirmation it does not read); it reads no prune confirmation (an owner's
// flotilla.dev/confirm-prune), so a prune over the budget waits; and it reports on the hub
// only through the records' status, not a status object of its own on the spoke.
package agent
