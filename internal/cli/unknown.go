package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// requireSubcommand makes a command that only groups others print its help when called
// alone, and refuse any other argument with a suggestion, rather than print help and succeed.
func requireSubcommand(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return usageError(fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd, args[0])))
	}
	return cmd
}

// didYouMean suggests the subcommands of cmd close to what was typed, as cobra does for the
// root command.
func didYouMean(cmd *cobra.Command, typed string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	suggestions := cmd.SuggestionsFor(typed)
	if len(suggestions) == 0 {
		return ""
	}
	for i, s := range suggestions {
		suggestions[i] = fmt.Sprintf("%q", s)
	}
	return "; did you mean " + strings.Join(suggestions, " or ") + "?"
}

// statusKinds are the kinds `flotilla status` explains, by their plural names.
var statusKinds = map[string]string{
	"propagations": "propagation/NAME -n NAMESPACE", "clusterpropagations": "clusterpropagation/NAME",
	"placements": "placement/NAME -n NAMESPACE", "apipropagations": "apipropagation/NAME",
	"resourcegraphdefinitions": "rgd/NAME",
}

// unknownResourceType explains a type `flotilla get` does not list: a typo of one it lists, a
// kind of Flotilla's (or kro's) on the hub that kubectl lists, or neither.
func unknownResourceType(get *cobra.Command, typed string) error {
	if hint := didYouMean(get, typed); hint != "" {
		return fmt.Errorf("unknown resource type %q for %q%s", typed, get.CommandPath(), hint)
	}
	if crd := hubCRD(typed); crd != nil {
		plural := crd.Spec.Names.Plural
		use := fmt.Sprintf("use `kubectl get %s`", plural)
		if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			use = fmt.Sprintf("use `kubectl get %s -n NAMESPACE` (or -A)", plural)
		}
		use += " for the hub's columns"
		if arg, ok := statusKinds[plural]; ok {
			use += fmt.Sprintf(", or `flotilla status %s` for one of them cluster by cluster", arg)
		}
		return fmt.Errorf("%q lists only clusters; for %s on the hub %s", get.CommandPath(), plural, use)
	}
	return fmt.Errorf("unknown resource type %q for %q: it lists clusters; list other objects of the hub with kubectl get", typed, get.CommandPath())
}

// hubCRD returns the CRD, of Flotilla's or kro's, whose plural, singular, short or kind name
// (or plural.group) is typed; nil if none is.
func hubCRD(typed string) *apiextensionsv1.CustomResourceDefinition {
	crds, err := install.CRDs()
	if err != nil {
		return nil
	}
	if kro, err := install.KroCRD(); err == nil {
		crds = append(crds, kro)
	}
	typed = strings.ToLower(typed)
	for _, crd := range crds {
		n := crd.Spec.Names
		for _, name := range append([]string{n.Plural, n.Singular, strings.ToLower(n.Kind), crd.Name}, n.ShortNames...) {
			if typed == name {
				return crd
			}
		}
	}
	return nil
}
