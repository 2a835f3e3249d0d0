package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// completionTimeout bounds the hub reads of one completion: a shell waiting on TAB for an
// unreachable hub gets no completions, quickly.
const completionTimeout = 3 * time.Second

// addCompletions completes the names commands take from what is on the hub: clusters, the
// Propagations and ClusterPropagations an owner argument names, transparent-mode objects
// (deploy/NAME, ...), Placements, and the values of -n and --context (completionflags.go). The shell
// scripts come from cobra (flotilla completion bash|zsh|fish|powershell); they call
// `flotilla __complete ...`, which parses the command's flags (--hub-kubeconfig, -n) and runs
// these functions. A hub that cannot be read completes nothing, silently.
func addCompletions(root *cobra.Command, hf *hubFlags) {
	one := func(f cobra.CompletionFunc) cobra.CompletionFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return f(cmd, args, toComplete)
		}
	}
	clusters := completeFromHub(hf, clusterNames, false)
	owners := completeFromHub(hf, ownerNames(false), true)
	for path, complete := range map[string]cobra.CompletionFunc{
		"cluster cordon":   one(clusters),
		"cluster uncordon": one(clusters),
		"cluster drain":    one(clusters),
		"unjoin":           one(clusters),
		"get clusters":     completeFromHub(hf, unlisted(clusterNames), false),
		"plan":             withTransparentOwners(hf, one(owners)),
		"diff":             withTransparentOwners(hf, one(owners)),
		"status":           one(completeFromHub(hf, ownerNames(true), true)),
		"rollout status":   withTransparentOwners(hf, one(owners)),
		"rollout approve":  withTransparentOwners(hf, one(owners)),
		"rollout undo":     withTransparentOwners(hf, one(owners)),
		"rollout history":  withTransparentOwners(hf, one(owners)),
		"rollout pause":    withTransparentOwners(hf, one(owners)),
		"rollout resume":   withTransparentOwners(hf, one(owners)),
	} {
		if cmd, _, err := root.Find(strings.Fields(path)); err == nil && cmd.Name() == path[strings.LastIndex(path, " ")+1:] {
			cmd.ValidArgsFunction = complete
		}
	}
	addFlagCompletions(root, hf)
}

// hubNames lists names on the hub for a command.
type hubNames func(ctx context.Context, hub client.Client, cmd *cobra.Command, args []string) ([]string, error)

// completeFromHub completes toComplete from the names list returns, reading the hub with the
// command's kubeconfig; for owners, propagation/NAME completes too. Any error gives no
// completions.
func completeFromHub(hf *hubFlags, list hubNames, owners bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel := context.WithTimeout(ctx, completionTimeout)
		defer cancel()
		hub, err := hf.clientWithin(completionTimeout)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := list(ctx, hub, cmd, args)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, n := range names {
			switch rest, typed := strings.CutPrefix(toComplete, "propagation/"); {
			case strings.HasPrefix(n, toComplete):
				out = append(out, n)
			case typed && owners && !strings.Contains(n, "/") && strings.HasPrefix(n, rest):
				out = append(out, "propagation/"+n) // a Propagation named with its kind
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func clusterNames(ctx context.Context, hub client.Client, _ *cobra.Command, _ []string) ([]string, error) {
	var list flotillav1.ClusterList
	if err := hub.List(ctx, &list); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	return names, nil
}

// unlisted leaves out the names already on the command line.
func unlisted(list hubNames) hubNames {
	return func(ctx context.Context, hub client.Client, cmd *cobra.Command, args []string) ([]string, error) {
		names, err := list(ctx, hub, cmd, args)
		var out []string
		for _, n := range names {
			if !slices.Contains(args, n) {
				out = append(out, n)
			}
		}
		return out, err
	}
}

// ownerNames lists the Propagations of the command's namespace (-n, else default) by name, the
// ClusterPropagations as clusterpropagation/NAME and, with placements, the namespace's
// Placements as placement/NAME.
func ownerNames(placements bool) hubNames {
	return func(ctx context.Context, hub client.Client, cmd *cobra.Command, _ []string) ([]string, error) {
		namespace := namespaceOf(cmd)
		var names []string
		var props flotillav1.PropagationList
		if err := hub.List(ctx, &props, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		for _, p := range props.Items {
			names = append(names, p.Name)
		}
		var cprops flotillav1.ClusterPropagationList
		if err := hub.List(ctx, &cprops); err != nil {
			return nil, err
		}
		for _, p := range cprops.Items {
			names = append(names, "clusterpropagation/"+p.Name)
		}
		if placements {
			var pls flotillav1.PlacementList
			if err := hub.List(ctx, &pls, client.InNamespace(namespace)); err != nil {
				return nil, err
			}
			for _, p := range pls.Items {
				names = append(names, "placement/"+p.Name)
			}
		}
		return names, nil
	}
}
