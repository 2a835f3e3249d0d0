// Package chart renders Flotilla's Helm chart (charts/flotilla, embedded in the binary) with
// Helm's own template engine, as `helm template` does: `flotilla install` applies what it
// renders, and `make generate` writes its render with default values as the kustomize base
// config/default. It is the only package that imports Helm, so that Helm's compile time is paid
// once, by it and by the binary.
package chart
