package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// addFlagCompletions completes the values of the flags that name things kubectl completes too:
// --context and --hub-context from the kubeconfig the command would read, and -n/--namespace
// from the hub's Namespaces, on every command that has it (and nothing where it is ignored). join and unjoin, whose --context is
// the spoke's, complete it from their own --kubeconfig the same way.
func addFlagCompletions(root *cobra.Command, hf *hubFlags) {
	contexts := func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		path := hf.kubeconfig
		if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
			path = f.Value.String() // the spoke's, in join and unjoin
		}
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = path
		cfg, err := rules.Load()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for name := range cfg.Contexts {
			if strings.HasPrefix(name, toComplete) {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	namespaces := completeFromHub(hf, namespaceNames, false)
	for _, name := range []string{"context", "hub-context"} {
		_ = root.RegisterFlagCompletionFunc(name, contexts)
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if f := cmd.LocalNonPersistentFlags().Lookup("context"); f != nil {
			_ = cmd.RegisterFlagCompletionFunc("context", contexts)
		}
		switch f := cmd.LocalNonPersistentFlags().Lookup("namespace"); {
		case f != nil && f.Hidden: // accepted and ignored (Clusters have none)
			_ = cmd.RegisterFlagCompletionFunc("namespace", cobra.NoFileCompletions)
		case f != nil:
			_ = cmd.RegisterFlagCompletionFunc("namespace", namespaces)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func namespaceNames(ctx context.Context, hub client.Client, _ *cobra.Command, _ []string) ([]string, error) {
	var list corev1.NamespaceList
	if err := hub.List(ctx, &list); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	return names, nil
}

// withTransparentOwners completes KIND/NAME for a kind of transparent mode typed before the
// slash (deploy/, deployment/, sts/, ...): the objects of that kind in the command's namespace
// labelled flotilla.dev/placement, spelled with the kind as typed. Anything else goes to next.
func withTransparentOwners(hf *hubFlags, next cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		word, _, typed := strings.Cut(toComplete, "/")
		gvk, ok := transparentKind(word)
		if len(args) > 0 || !typed || !ok {
			return next(cmd, args, toComplete)
		}
		list := func(ctx context.Context, hub client.Client, cmd *cobra.Command, _ []string) ([]string, error) {
			objs := &unstructured.UnstructuredList{}
			objs.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := hub.List(ctx, objs, client.InNamespace(namespaceOf(cmd)), client.HasLabels{flotillav1.LabelPlacement}); err != nil {
				return nil, err
			}
			names := make([]string, 0, len(objs.Items))
			for _, o := range objs.Items {
				names = append(names, word+"/"+o.GetName())
			}
			return names, nil
		}
		return completeFromHub(hf, list, false)(cmd, args, toComplete)
	}
}

// namespaceOf is the command's -n, else default.
func namespaceOf(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return "default"
}
