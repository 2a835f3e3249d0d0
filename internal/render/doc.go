// Package render turns hub objects into the objects desired on a spoke. It is pure: no I/O.
//
// Rendering strips what belongs to the hub (uid, resourceVersion, generation, managedFields,
// creation and deletion timestamps, owner references, finalizers, status, the last-applied
// annotation kubectl leaves, transparent mode's list of clusters, and what the hub's API server
// allocated, such as a Service's clusterIP: see allocated.go), adds Flotilla's ownership
// markers, and stamps the object with a hash of its canonical JSON. The hash is how the
// deliverer skips objects that are already as desired; it is not an API contract and may change
// between releases.
package render
