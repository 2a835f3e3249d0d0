// Package kro is Flotilla's only door to kro (github.com/kubernetes-sigs/kro, pinned in go.mod):
// it compiles kro ResourceGraphDefinitions and evaluates their instances with kro's own
// packages, so that fleet APIs behave exactly as kro defines them, and nothing else in Flotilla
// imports kro. It re-exports kro's RGD type (ResourceGraphDefinition, AddToScheme) and the keys
// of kro's observable contract (labels, annotations, finalizer, states).
//
// The package does no writes and keeps no state:
//
//   - Compile turns an RGD into the CRD to serve and a graph, against one cluster's Target:
//     its OpenAPI v3 schemas and REST mapper (TargetForConfig for a live cluster,
//     TargetForSnapshot for recorded data). Each spoke is compiled against its own schemas, so
//     a kind missing on one spoke is a *SchemaNotFoundError there, naming the resource and the
//     kind, and not a fleet-wide failure. kro's graph builder does the work: SimpleSchema,
//     template checking, CEL type checking, dependency order and status inference.
//   - Evaluate runs kro's runtime for one instance, given what exists on its cluster (an
//     Observer): the children to apply in dependency order with kro's labels and apply-order
//     annotation, which resources wait on data, are excluded by includeWhen or are ready, whether
//     pruning is safe, the instance's ApplySet metadata, and the status kro would write (state,
//     conditions, the RGD's CEL status fields).
//   - The CEL of an instance's evaluation runs under limits (limits.go), since its cost is in
//     the hands of whoever writes the instance's spec and it runs on the hub: cel-go's cost
//     limit per expression (Config.CELCostLimit, Kubernetes' per-call limit by default), a
//     budget for the whole evaluation (Config.CELCostBudget), and Evaluate's context, which
//     interrupts a running comprehension. kro compiles its programs without limits and its
//     builder takes no CEL options, so Compile compiles each expression again with them and
//     each evaluation swaps them into a copy of the graph. A pass stopped so is ERROR, naming
//     the expression and the limit (Plan.Err matches ErrCELLimit).
//   - CheckCRDUpdate applies kro's CRD compatibility rules before a served CRD is replaced,
//     honouring kro.run/allow-breaking-changes.
//
// kro reports its own version from the main module's build information, which in Flotilla is
// Flotilla's; the contract labels and the ApplySet tooling name Version instead, so that a
// spoke-local kro and Flotilla can take over each other's instances. TestPinnedVersion and the
// signature assertions in pin_test.go fail when the kro module or the parts of its API used
// here change: a kro upgrade is a deliberate change.
//
// # How instances are watched and delivered
//
// internal/instances is the instance reconciler built on this package: per engaged spoke and
// served kind it watches the instances, evaluates each with the Compiled served there (its
// Observer answers from the spoke cache, and from shared watches for external references),
// and hands the plan to the deliverer as one job owned by the instance on its spoke: the
// children, kro's prune decision, the instance's metadata (Plan.Instance, written before the
// children; the inventory shrinks to AnnotationsAfterPrune only after a prune) and its status.
// A plan with Err applies nothing but its status. Readiness is trusted only at the delivered
// revision (Plan.Hold reports IN_PROGRESS meanwhile), and deletion follows the persisted
// inventory (DeletionInventory, DeletingStatus) in reverse apply order, never the graph.
package kro
