// Package devenv is the local development fleet behind `flotilla dev up`: a hub and a few full
// spokes on this machine, with kubeconfigs in one directory and the next commands to try.
//
// It owns the choices that make the dev fleet useful for trying Flotilla (spoke names, the
// region and env labels that placement examples select on, where kubeconfigs go) and the
// guards on its directory: two runs never share one, and dev up only takes a new or empty
// directory, or one it set up itself (marked by .flotilla-dev), and removes only the entries it
// writes there (ownedEntries), never a user's files. Starting and stopping the planes is
// localfleet's job.
package devenv
