// Package cli defines the flotilla command line: one binary whose subcommands are grouped by
// audience (fleet users, operators of the hub, developers of Flotilla). Each command parses and
// checks its flags, then hands the work to the package that owns it.
package cli
