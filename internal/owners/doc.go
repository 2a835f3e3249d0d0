// Package owners is the hub's registry of the owners that exist: every hub owner (Propagation,
// ClusterPropagation, a labelled hub object in transparent mode, the RGD behind a served fleet
// API's CRD) and every instance of a fleet API on a spoke, each by the value of the owner label
// (render.Owner.LabelValue) it puts on the objects it delivers.
//
// The spoke caches ask it which objects they keep whole (internal/inventory): an object whose
// owner label names no known owner, or names a namespaced owner but sits in another namespace,
// is any spoke user's to create, and costs the hub a small stub only. The hub feeds the
// registry from its owner informers (internal/hub) and the instances controller from its
// instance informers; spokes are engaged only once the hub's sources have synced (WaitSynced),
// so after a restart no delivered object is stubbed for want of its owner.
package owners
