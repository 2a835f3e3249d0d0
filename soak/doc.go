// Command soak is Flotilla's seeded chaos soak. It starts its own local fleet (a hub and
// API-only spokes with audit logs), installs Flotilla's CRDs, runs the real `flotilla hub` as a
// child process, and for --duration drives a continuous stream of edits (Propagations of
// ConfigMaps and transparent-mode Deployments divided over the spokes on the hub, and instances
// of a fleet API, an RGD served by an APIPropagation, on the spokes) while a random schedule,
// drawn from --seed, injects faults one at a time: spoke API servers frozen with SIGSTOP,
// spoke API servers and etcds restarted, the hub controller SIGKILLed and started again, and
// spoke-side edits and deletions of delivered objects.
//
// At the end the faults stop and the soak waits for the fleet to converge, then checks that
// every spoke holds exactly what the hub says (object by object, values too), that no delete
// Flotilla sent to a spoke was wrongful (from the spokes' audit logs against the soak's own
// record of what the hub wanted when), that Flotilla's writes per hub change are bounded, and
// that the hub controller's memory is flat. It prints a summary, writes
// soak/results/<timestamp>.json, and exits non-zero when a check fails, saying what differed.
//
// Run it with `make soak` (SOAK=3m for a short run, SOAK_ARGS="--seed 42" to replay a run);
// docs/soak.md explains the faults, the checks and their bounds. Every process the soak
// starts is stopped by PID, on failure too; the caller holds the fleet lock (make soak takes
// it with flock).
package main
