// Package intern shares the memory of equal strings held by long-lived caches.
//
// Flotilla caches the same object once per spoke: its payload, labels, annotations and field
// names are equal across the fleet, and JSON decoding allocates each of them anew. Interning
// them when an object enters a cache makes N clusters hold one copy of each string instead of
// N. The table is bounded: it forgets its oldest half when full, so strings of deleted objects
// do not stay in memory, at worst costing a second copy of a string seen long ago.
package intern
