// Package placement runs the scheduler for every Placement on the hub and records its choice in
// the Placement's status.decisions, which the propagation stage reads. It writes status only
// when the choice or its explanation changes.
package placement
