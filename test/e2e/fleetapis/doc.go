// Package fleetapis holds Flotilla's end-to-end tests of fleet APIs: kro's own test corpus of
// ResourceGraphDefinitions served from the hub on spokes, and a spoke's kro taken over. They
// are end-to-end tests like those of test/e2e (real planes, the real kubectl and flotilla
// binaries), in a package of their own so that `make test` runs them beside that suite, not
// after it.
package fleetapis
