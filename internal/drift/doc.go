// Package drift tells whether an object on a spoke still holds what Flotilla applied.
//
// It compares only what Flotilla owns: the fields the desired object sets. Fields that spoke
// controllers add, defaults the API server fills in, status, and list items that other field
// managers appended are not drift. Values are compared the way the API server normalises
// them (numbers by value, resource quantities by amount, empty maps and lists as absent), so
// that an object applied a moment ago never looks drifted. Paths are JSON pointers (RFC 6901).
//
// The package is pure: no clients, no clocks. The deliverer calls it on spoke watch events and
// on periodic verification; `flotilla diff` calls it to show drift.
package drift
