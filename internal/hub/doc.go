// Package hub assembles Flotilla's hub controller: one multicluster-runtime manager on the hub
// API server, the inventory provider that engages spokes, and (as they arrive) the controllers
// of the later pipeline stages. `flotilla hub`, `flotilla dev up` and the integration tests all
// run it through Run, so they run the same thing.
package hub
