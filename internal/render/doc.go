// Package render turns hub objects into the objects desired on a spoke. It is pure: no I/O.
//
// Rendering strips what belongs to the hub (uid, resourceVersion, generation, managedFields,
// creation and deletion timestamps, owner references, finalizers, status, the last-applied
// annotation kubectl leaves, transparent mode's list of clusters, and what the hub's API server
// allocated, such as a Service's clusterIP: see allocated.go), adds Flotilla's ownership
// markers, and stamps the object with a hash of its canonical JSON. The hash is how the
// deliverer skips objects that are already as desired; it is not an API contract and may change
// between releases.
//
// The markers are the owner label (a hash of the owner: its presence marks an object as
// Flotilla's, see Managed and ManagedSelector), the owner annotation (the owner's name: who
// holds an object, and recognizing an object whose owner label was removed on the cluster) and
// the hash annotation. Spokes store, serialize and merge every marker on every write, so
// nothing else is added. Earlier releases also set the label flotilla.dev/managed-by; objects
// carrying it are still recognized, and lose it at their next apply.
package render
