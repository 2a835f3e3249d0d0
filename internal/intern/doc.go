// Package intern shares the memory of equal strings held by long-lived caches.
//
// Flotilla caches the same object once per spoke: its payload, labels, annotations and field
// names are equal across the fleet, and JSON decoding allocates each of them anew. Interning
// them when an object enters a cache makes N clusters hold one copy of each string instead of
// N. The table is bounded: it forgets its oldest half when full, so strings of deleted objects
// do not stay in memory, at worst costing a second copy of a string seen long ago.
//
// Why not the standard library's unique package: unique keeps a canonical copy only while a
// unique.Handle to it is alive, and a spoke cache holds plain strings inside decoded objects
// (map[string]any), not handles. After a garbage collection the canonical copies are gone, and
// the next cluster's equal strings become new canonical copies, held again. Measured with
// internal/inventory's BenchmarkSpokeCacheHeap (ten clusters × 1000 objects, a collection
// between clusters, as caches fill over time): with 4 KiB payloads, unique holds 6714 B per
// (object, cluster) against this table's 4833 (+39%); with 256 B payloads 4794 against 4641.
// Keeping handles beside every cached object would cost what the sharing saves.
package intern
