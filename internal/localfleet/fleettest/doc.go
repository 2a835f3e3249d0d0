// Package fleettest starts a localfleet for a Go test and stops it when the test ends, passed
// or failed. Integration and end-to-end tests use it to stand on real API servers.
//
// A package whose TestMain runs its tests through Main hands fleets on: when a test passes, its
// fleet is paused (no CPU while it waits) and given to the next test that asks for the same
// planes, resumed and reset (localfleet's Reset: every object stored since the fleet started is
// deleted from etcd, the controllers restarted on what is left, the audit logs read afresh),
// instead of being stopped and another started. A start costs a plane about 3 CPU-seconds, a
// reset a fraction of a second; most suites ask for the same few shapes again and again. A fleet
// whose test failed is stopped as before; a plane a test stopped is started again by the reset;
// a fleet that cannot be reset (a component that exited by itself) is stopped and a fresh one
// started; Main stops the fleets kept when the tests are done.
package fleettest
