// Package charts embeds Flotilla's Helm chart (charts/flotilla), the one source of a hub's
// installation: `flotilla install` renders it with Helm's engine, `make generate` renders it
// into the kustomize base config/default, and Helm users install the directory itself.
package charts

import "embed"

// Flotilla holds the chart under flotilla/ (all: keeps _helpers.tpl and .helmignore).
//
//go:embed all:flotilla
var Flotilla embed.FS
