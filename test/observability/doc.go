// Package observability checks Flotilla's monitoring artifacts without an API server: the
// Prometheus alert rules (charts/flotilla/files/alerts.yaml) pass their promtool unit tests,
// every alert has tests that see it fire and stay quiet, and the Grafana dashboard
// (charts/flotilla/files/dashboard.json) parses, with every PromQL expression parsed by
// Prometheus' own parser. Rules and dashboard may name only the series docs/operations.md
// documents, which internal/hub's metrics test checks the hub exports.
//
// It is a module of its own so that the Prometheus server module, which promtool and the PromQL
// parser come from, never moves the versions the Flotilla module builds with. `make verify`
// builds promtool from it into bin/ once and runs these tests.
package observability
