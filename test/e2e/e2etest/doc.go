// Package e2etest holds what Flotilla's end-to-end test packages share: the kubectl and flotilla
// binaries they drive (flotilla built once per test binary), and the fleet most of them start
// (a hub and three full spokes, Flotilla installed, running and joined).
package e2etest
