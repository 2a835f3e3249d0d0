// Package e2e holds Flotilla's end-to-end tests: real hub and spoke control planes from
// localfleet, driven through the real kubectl binary and the flotilla binary, as a user would.
package e2e
