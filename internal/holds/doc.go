// Package holds decides, for every owner kind alike, when an owner's pass may not remove
// anything, or may not run at all, and which confirmation lets a removal go ahead. It has no
// client and no clock: the owner's reconcile reads the inputs (its Placement, the clusters its
// Delivery records name, its flotilla.dev/confirm-prune annotation) and hands them over in a
// Pass; Check and Pass.Leaving answer with a reason and a message that names the command
// which confirms, ready to paste.
//
// The rules, in the order Check applies them:
//
//   - An owner that no longer names a Placement (a transparent-mode object whose
//     flotilla.dev/placement label was removed) while it is delivered somewhere keeps every
//     copy until the removal from all of those clusters is confirmed.
//   - A Placement that does not exist holds everything: nothing is delivered or removed.
//   - A Placement whose status has not caught up with its spec has not decided yet: its
//     current decisions are delivered, nothing is removed.
//   - A Placement that chooses no cluster while the owner is delivered somewhere keeps every
//     copy until the removal from all of them is confirmed.
//
// Pass.Leaving is the fleet-wide prune budget: removing the owner from more than the budget's
// share of the clusters one change touches (those chosen and those it leaves) waits for
// confirmation. The per-cluster prune budget is the deliverer's (package deliver/decide).
//
// Planned is what `flotilla plan` shows: the hold Check or Leaving (for the clusters the
// records name that are no longer chosen, Pass.Left) would apply, from the Pass each owner
// package builds for its controller.
//
// One confirmation scheme serves every removal from clusters: the value ("clusters-" and a
// hash) names the Placement's generation and the clusters emptied, or "every cluster", so it
// confirms that removal and no other: neither a removal from other clusters, nor the same one
// after the Placement changed again. A removal once started is not asked about again while
// it goes on (package fanout), so the clusters left to empty may shrink under a confirmation.
//
// Not here: what each cluster gets (selection, rendering, division, overrides: the owner
// packages), the make-before-break order of removals (package fanout), and deletions inside a
// cluster (package deliver/decide).
package holds
