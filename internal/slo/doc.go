// Package slo measures how long Flotilla takes to do what its users wait for, as Prometheus
// histograms on controller-runtime's registry: a change an owner asks for (new objects, a new
// revision, other clusters) until every cluster its Placement chooses has it applied
// (Changes, fed by package fanout at each pass of an owner). The other service levels are
// measured where they happen: a drift until its correction (package deliver) and a write to a
// spoke until its answer (package spokeclient).
//
// Labels are bounded: the owner's kind, never its name.
package slo
