package fleetapi

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// compilesTotal counts the RGD compiles that ran (cache misses): a steady fleet adds none, so a
// rising rate means RGDs or the schemas of the kinds they use keep changing on some cluster.
var compilesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_api_compiles_total",
	Help: "Compiles of a ResourceGraphDefinition against a cluster's schemas that ran (cached compiles are not counted), by result (ok, schema_not_found, invalid_graph, unreadable, error).",
}, []string{"result"})

// compileResults are the metric's results, by the compile error's compileReason.
var compileResults = map[string]string{"": "ok", flotillav1.ReasonSchemaNotFound: "schema_not_found",
	flotillav1.ReasonInvalidGraph: "invalid_graph", flotillav1.ReasonSchemaUnreadable: "unreadable", flotillav1.ReasonCompileFailed: "error"}

func init() {
	ctrlmetrics.Registry.MustRegister(compilesTotal)
	// Every result starts at 0, so that rate() and alerts see its first compile.
	for _, result := range compileResults {
		compilesTotal.WithLabelValues(result)
	}
}

func countCompile(err error) { compilesTotal.WithLabelValues(compileResults[compileReason(err)]).Inc() }
