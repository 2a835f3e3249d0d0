// Package placement runs the scheduler for every Placement on the hub and records its choice in
// the Placement's status.decisions, which the propagation stage reads. It writes status only
// when the choice or its explanation changes. Clusters "chosen before" come from the status and
// from the Delivery records of the Placement's owners that the ledger wrote for a live owner
// naming it (ledger.Trust); records that fail that check are named in an
// UntrustedDeliveryRecords Event on the Placement and otherwise ignored.
package placement
