// Package devenv is the local development fleet behind `flotilla dev up`: a hub and a few full
// spokes on this machine, with kubeconfigs in one directory and the next commands to try.
//
// It owns the choices that make the dev fleet useful for trying Flotilla (spoke names, the
// region and env labels that placement examples select on, where kubeconfigs go) and the
// guards on its directory: two runs never share one, and dev up only takes a new or empty
// directory, or one it set up itself (marked by .flotilla-dev), and removes only the entries it
// writes there (ownedEntries), never a user's files. Starting and stopping the planes is
// localfleet's job.
//
// With PullSpokes, the last spokes are pull-mode clusters: RegisterPull creates their Cluster
// (spec.mode Pull, no credentials) and agent identity, the in-process hub serves its work
// endpoint on loopback, and StartAgent runs each one's `flotilla agent` as a child process in
// its plane's directory with a work token it renews. The benchmark's pull scenario runs its
// agent the same way.
package devenv
