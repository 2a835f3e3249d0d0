// Package ownerkinds is what every owner kind shares above package fanout: the kinds of hub
// object that own what Flotilla delivers (Propagations and ClusterPropagations, transparent-mode
// hub objects, the RGDs of fleet APIs), described once each, and the small pieces of glue each
// owner controller would otherwise write again.
//
// A Registry holds the hub's owner kinds (Kind): how a Delivery record names an owner of the
// kind and the Placement it uses (for the ledger's trust), which of the kind's objects are
// owners now (for the spoke caches' known owners), and the controller that delivery results and
// drift of its owners go back to (Registry.Notify, Registry.RecordDrift). The hub builds the one
// table (internal/hub/owners.go), so a new owner kind is added in one place. Owners on spokes
// (fleet API instances, internal/instances) are not hub owner kinds and are routed by the hub
// directly.
//
// DriftEvents is the one way drift becomes an Event on the hub object that stands for its owner;
// SetFinalizer puts Flotilla's cleanup finalizer on an owner or takes it off; PlacementUsers maps
// a Placement to the owners that use it, for the owner controllers' watches.
//
// It decides nothing about what an owner delivers, holds or confirms: the owner controllers and
// packages fanout and holds do.
package ownerkinds
