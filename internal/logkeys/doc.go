// Package logkeys names the keys of Flotilla's structured logs that tie a line to what it is
// about, the same in every package, so that one query finds every line of a cluster or an
// owner: "cluster" (a Cluster's name) and "owner" (Kind/namespace/name, as render.Owner prints
// it). The deliverer, the inventory and the owner controllers use them; controller-runtime's
// own keys (controller, reconcileID) come with them.
//
// Log lines carry names and reasons, never the content of an object: no byte of a Secret is
// ever logged.
package logkeys
