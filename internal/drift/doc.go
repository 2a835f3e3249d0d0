// Package drift tells whether an object on a spoke still holds what Flotilla applied.
//
// It compares only what Flotilla owns: the fields the desired object sets. Fields that spoke
// controllers add, defaults the API server fills in, status, and list items that other field
// managers appended are not drift. Values are compared the way the API server normalises
// them (numbers by value, resource quantities by amount, empty maps and lists as absent), so
// that an object applied a moment ago never looks drifted. Paths are JSON pointers (RFC 6901),
// parsed, escaped and read with github.com/go-openapi/jsonpointer; Set adds what Flotilla needs
// of a write (missing maps created, nulls kept).
//
// Where the cluster stores something else than Flotilla sent (admission, or the API server
// itself, changed a field), Project gives what the server stores of Flotilla's fields, which
// the deliverer then compares with instead of the desired object.
//
// Corrections and FightWindow, FightThreshold, Backoff are the rules for an object someone on
// the cluster changes back after every correction: corrections back off, and a fight is
// reported once instead of being fought as fast as the cluster answers.
//
// The package is pure: no clients, no clocks (callers pass the time). The deliverer calls it on spoke watch events and
// on periodic verification; `flotilla diff` calls it to show drift.
package drift
