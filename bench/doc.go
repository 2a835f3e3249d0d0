// Command bench measures how close Flotilla gets to what the API servers can take. It starts
// its own local fleet (a hub and API-only spokes with audit logs), runs `flotilla hub` as a
// separate process, and compares each scenario with a plain client doing the same work
// directly, in the same run: the machine is shared and noisy, so ratios matter, not seconds.
// The plain client has no client-side rate limit: like kubectl, it leaves the pace to the
// spokes' API Priority and Fairness, and so does Flotilla. The bulk scenarios also report the
// spokes' 429s and write latency, so going fast is never bought by overloading a spoke.
// instance_ready, the time from `kubectl create` of a fleet API instance to ACTIVE, compares
// with kro's own controller instead, which the benchmark builds from the kro module in go.mod
// and runs against one spoke. The pull scenario compares pull mode with push mode instead: the
// same objects to one push spoke and to one pull spoke whose `flotilla agent` runs as a process
// of its own (devenv.StartAgent), with the agent's CPU and memory.
//
// The scale scenario (`--only scale`, not in the default run) measures instead how the hub's
// own costs grow with the number of clusters: a fleet of its own per step of --scale-steps,
// the same objects per spoke, and a table of each figure with its least-squares slope per
// added cluster (docs/scale.md).
//
// Run it with `make bench` (BENCH_ARGS="--spokes 3 --objects 300"); it prints a table and
// writes bench/results/<timestamp>.json. docs/performance.md explains the scenarios.
package main
