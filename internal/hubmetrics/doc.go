// Package hubmetrics exports the state of the fleet as the hub stores it, read from the hub
// controller's cache when Prometheus scrapes: Clusters by readiness (flotilla_clusters) and
// owners by their conditions (flotilla_owners: those stored in the hub's objects, and those
// transparent mode keeps in memory for its labelled objects). Labels are bounded enumerations
// (a state, a kind, a condition type, status and reason), never the name of an object.
//
// Only the elected replica exports them, so that a scrape of every replica counts each object
// once. flotilla_rollout_stage_duration_seconds is the exception: a histogram the owner pass
// (package ownerpass) observes when a rollout's stage completes.
package hubmetrics
