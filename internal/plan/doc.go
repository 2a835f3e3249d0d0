// Package plan tells what delivering a Propagation would do on each cluster, and how the
// clusters differ from it now, without changing anything: every would-be write is a
// server-side dry run, with Flotilla's field manager, so the spoke's own validation, defaults
// and admission decide what the result would be. `flotilla plan` and `flotilla diff` print it.
package plan
