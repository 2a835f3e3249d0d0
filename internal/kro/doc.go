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
//   - CheckCRDUpdate applies kro's CRD compatibility rules before a served CRD is replaced,
//     honouring kro.run/allow-breaking-changes.
//
// kro reports its own version from the main module's build information, which in Flotilla is
// Flotilla's; the contract labels and the ApplySet tooling name Version instead, so that a
// spoke-local kro and Flotilla can take over each other's instances. TestPinnedVersion and the
// signature assertions in pin_test.go fail when the kro module or the parts of its API used
// here change: a kro upgrade is a deliberate change.
//
// # Design note: how instances will be watched and delivered
//
// Nothing here is wired into controllers yet. The instance reconciler (a later package) will:
//
//   - Watch instances with a multicluster-runtime Aware runnable: per engaged spoke and per kind
//     served there (once its CRD is Established), a dynamic informer over the instances. The
//     spoke caches cannot serve: they hold only objects with Flotilla's owner label, and users
//     create instances without it. A disengaged spoke stops its informers and deletes nothing.
//   - Evaluate each instance with the Compiled pinned for (RGD revision, spoke). The Observer
//     answers from the spoke cache, which holds the children because the deliverer labels them
//     as the instance's (by name for a resource, by kro.run/instance-id and kro.run/node-id
//     for a forEach), and from shared, reference-counted watches for external references. A
//     steady-state pass makes no API request.
//   - Deliver the plan as a deliver.Job whose owner is the instance on its spoke:
//     render.Owner{Kind: "<Kind>.<group>", Namespace, Name, Cluster: spoke}, Cluster the same
//     spoke (the deliverer already refuses any other cluster and any other namespace).
//     Objects are Plan.Children, rendered with Flotilla's markers on top of kro's labels;
//     PruneKinds are the graph's kinds (Compiled.Nodes) plus those the instance's ApplySet
//     inventory lists; Prune is Plan.Prune; Status holds the instance with Plan.Status, which
//     the deliverer writes only when it differs. A plan with Err submits no new objects (kro
//     applies nothing then) but still its status; a suspended one, only its status.
//   - Keep the instance's metadata (Plan.Instance: finalizer, labels, ApplySet inventory) with
//     a metadata-only apply to the owner object before the children, an operation the deliverer
//     does not have yet; the inventory shrinks to AnnotationsAfterPrune once a Result reports
//     the prune Complete.
//   - Trust readiness only at the delivered revision: Evaluate judges readyWhen on what the
//     cache shows, which just after a spec change is the previous object. Until the job's
//     Result is Complete at the plan's revision, the reconciler reports IN_PROGRESS rather than
//     Plan.State's ACTIVE. Deliverer results, instance events, child events (by owner label)
//     and external-reference events all re-trigger the instance.
//   - Delete an instance by its persisted inventory, never by the graph: the deliverer's
//     ordered removal by ApplyOrderAnnotation wave, highest first, each wave gone before the
//     next, then the finalizer dropped.
package kro
