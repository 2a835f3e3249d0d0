package cli

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// kubectl runs a plugin named kubectl-NAME on PATH as `kubectl NAME`, and asks an executable
// kubectl_complete-NAME for the plugin's completions (kubectl 1.26 and later).
const (
	pluginPrefix         = "kubectl-"
	pluginCompletePrefix = "kubectl_complete-"
)

// Invocation says how the binary was called, from os.Args[0]: as flotilla, as the kubectl plugin
// kubectl-flotilla (help then says `kubectl flotilla`), or as kubectl_complete-flotilla, kubectl's
// completion helper for the plugin, which answers as `flotilla __complete` does.
type Invocation struct {
	// Name is what help and messages call the command: "flotilla" or "kubectl flotilla".
	Name string
	// Complete is set for kubectl_complete-flotilla.
	Complete bool
}

// InvokedAs returns the Invocation of a binary called as arg0.
func InvokedAs(arg0 string) Invocation {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if name, ok := strings.CutPrefix(base, pluginCompletePrefix); ok && name != "" {
		return Invocation{Name: "kubectl " + name, Complete: true}
	}
	if name, ok := strings.CutPrefix(base, pluginPrefix); ok && name != "" {
		// kubectl-foo_bar is the plugin `kubectl foo-bar`.
		return Invocation{Name: "kubectl " + strings.ReplaceAll(name, "_", "-")}
	}
	return Invocation{Name: "flotilla"}
}

// asPlugin makes root's help and examples say name (`kubectl flotilla`) where they say flotilla.
func asPlugin(root *cobra.Command, name string) {
	if name == root.Name() {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = strings.ReplaceAll(c.Example, "  flotilla ", "  "+name+" ")
		c.Long = strings.ReplaceAll(c.Long, "  flotilla ", "  "+name+" ")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
