// Package decide is the apply decision: given an object an owner wants on a cluster, what the
// cluster holds under its name, and the owner's strategy, it says what a delivery does with the
// object (create, update, correct, leave, skip, or refuse, and why), and which of the owner's
// leftovers a prune may delete. The deliverer acts on its answers and `flotilla plan` prints
// them, so a plan never promises what a delivery would not do.
//
// Everything here is a function of its arguments: no clients, no reads, no clock, no state.
// Whatever needs the cluster (reading the live object, the kind's REST scope there, comparing
// the object with what the cluster stores for Flotilla's apply) the caller does first and
// passes in. That keeps every rule testable by a table, and lets any caller that obtains those
// inputs its own way (a spoke cache, a direct read, a dry run) take exactly the same decision.
//
// The rules, in the order Decide applies them:
//   - tenancy (CheckScope): an owner that lives in a namespace delivers only namespaced
//     objects, and only into its own namespace, judged by the cluster's own REST mapping;
//   - ownership: the owner label (flotilla.dev/owner) marks Flotilla's objects (render.Managed),
//     and its annotation must not name another owner; an object keeps the first owner that
//     delivered it, and one Flotilla did not create is taken over only when the strategy says
//     Adopt, and is then marked adopted (Decision.Adopt, flotilla.dev/adopted) so that no prune
//     or removal deletes it (Kept), but releases it (Released); a desired object may not carry
//     that mark;
//   - mode and drift policy (ModeOf, DriftOf): an object's annotations override the owner's
//     strategy; ApplyOnce objects are created (and recreated) but never updated, and changes
//     made on the cluster are corrected, reported or ignored as the policy says;
//   - fields left to the cluster (IgnoredFields): the owner's ignoreFields, and the replicas
//     of a workload an HPA scales there while its share is unchanged;
//   - pruning (Owned, InScope, Leftovers, Kept, OverBudget): only the owner's own objects in
//     its scope (its namespace, for a namespaced owner) are pruned, protected ones and those of
//     an Orphan strategy are kept, and a prune larger than the budget waits for confirmation
//     (ConfirmCommand). Marks can be forged by whoever may write on a cluster, so the budget
//     counts as the owner's only what it wants and what its deliveries confirmed, and
//     protected objects not at all: forged objects can make a prune wait, never let one through.
//
// What a decision leads to (writing, backing off a fight, waking other owners, reporting) is
// the deliverer's; this package only decides.
package decide
