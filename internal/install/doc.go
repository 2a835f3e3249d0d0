// Package install puts Flotilla's CustomResourceDefinitions on a hub with server-side apply and
// waits until the API server serves them. It is what `flotilla install`, `flotilla dev up` and
// the tests use, so all three install the same thing the same way.
package install
