package fleetapi

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// compilesTotal counts the RGD compiles that ran (cache misses): a steady fleet adds none, so a
// rising rate means RGDs or the schemas of the kinds they use keep changing on some cluster.
var compilesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_api_compiles_total",
	Help: "Compiles of a ResourceGraphDefinition against a cluster's schemas that ran (cached compiles are not counted), by result (ok, schema_not_found, invalid_graph, unreadable, error).",
}, []string{"result"})

func init() {
	ctrlmetrics.Registry.MustRegister(compilesTotal)
	// Every result starts at 0, so that rate() and alerts see its first compile.
	for _, result := range []string{"ok", "schema_not_found", "invalid_graph", "unreadable", "error"} {
		compilesTotal.WithLabelValues(result)
	}
}

func countCompile(err error) {
	var missing *kro.SchemaNotFoundError
	var invalid *kro.InvalidGraphError
	var target *kro.TargetError
	result := "error"
	switch {
	case err == nil:
		result = "ok"
	case errors.As(err, &missing):
		result = "schema_not_found"
	case errors.As(err, &invalid):
		result = "invalid_graph"
	case errors.As(err, &target):
		result = "unreadable"
	}
	compilesTotal.WithLabelValues(result).Inc()
}
