package kro

// ModulePath is the Go module Flotilla takes kro's compiler and evaluator from.
const ModulePath = "github.com/kubernetes-sigs/kro"

// Version is the kro release this package is built against, pinned in go.mod. kro reads its own
// version from the main module's build information, which in a Flotilla binary is Flotilla's;
// the contract labels and the ApplySet tooling therefore name this constant instead, and
// TestPinnedVersion fails if go.mod moves without it.
const Version = "v0.9.4"

// ToolingID is the ApplySet tooling annotation value on instances. kro refuses to take over an
// ApplySet whose tooling does not start with "kro/", so a spoke-local kro can adopt instances
// Flotilla expanded, and the other way round.
const ToolingID = "kro/" + Version

// Default collection limits of kro's controller (its --rgd-max-collection-size and
// --rgd-max-collection-dimension-size flags).
const (
	DefaultMaxCollectionSize          = 1000
	DefaultMaxCollectionDimensionSize = 10
)
