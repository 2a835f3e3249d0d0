// Package fleettest starts a localfleet for a Go test and stops it when the test ends, passed
// or failed. Integration and end-to-end tests use it to stand on real API servers.
package fleettest
