package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-dev/flotilla/internal/membership"
)

func newJoinCommand(hf *hubFlags) *cobra.Command {
	var (
		kubeconfig, kubeContext string
		labels                  []string
	)
	cmd := &cobra.Command{
		Use:     "join NAME --kubeconfig FILE",
		Short:   "Join a spoke cluster to the fleet",
		GroupID: groupFleet,
		Long: `Join a spoke cluster to the hub under NAME, a DNS-1123 label (at most 63 characters:
lowercase letters, digits and '-', starting and ending with a letter or digit).

On the spoke, join creates the flotilla-system namespace and a ServiceAccount bound to
cluster-admin, and issues a token for it; your own credentials are used for this only and are
never stored. On the hub, it stores a kubeconfig with that token in the Secret
flotilla-system/NAME-kubeconfig and creates the Cluster NAME with the given labels.

Joining again under the same name renews the token; joining the same API server under a second
name is refused.`,
		Example: `  flotilla join eu-1 --kubeconfig ~/.kube/eu-1.yaml --label region=eu-west --label env=prod
  flotilla join staging --kubeconfig ~/.kube/config --context staging-admin`,
		Args: exactlyOneName("join"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := membership.ValidateName(name); err != nil {
				return usageError(err)
			}
			parsed, err := parseLabels(labels)
			if err != nil {
				return usageError(err)
			}
			if kubeconfig == "" {
				return usageError(fmt.Errorf("--kubeconfig is required: the spoke's kubeconfig, used once to set Flotilla up there"))
			}
			spoke, err := loadKubeconfig(kubeconfig, kubeContext)
			if err != nil {
				return fmt.Errorf("spoke kubeconfig %s: %w", kubeconfig, err)
			}
			hub, err := hf.client()
			if err != nil {
				return err
			}
			return membership.Join(cmd.Context(), hub, membership.JoinOptions{
				Name: name, Spoke: spoke, Labels: parsed,
				Progress: func(line string) { _, _ = fmt.Fprintln(cmd.OutOrStdout(), line) },
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the spoke with admin rights (required)")
	f.StringVar(&kubeContext, "context", "", "context of the spoke in that kubeconfig (default: its current context)")
	f.StringArrayVar(&labels, "label", nil, "label for the Cluster, key=value; repeat for more")
	return cmd
}

func newUnjoinCommand(hf *hubFlags) *cobra.Command {
	var kubeconfig, kubeContext string
	cmd := &cobra.Command{
		Use:     "unjoin NAME",
		Short:   "Remove a spoke cluster from the fleet, leaving its workloads alone",
		GroupID: groupFleet,
		Long: `Remove the Cluster NAME and its credentials Secret from the hub, and Flotilla's
ServiceAccount and ClusterRoleBinding from the spoke, which revokes Flotilla's token. Nothing
else on the spoke is touched: workloads Flotilla delivered keep running.

The spoke is reached with the stored credentials, or with --kubeconfig if given. If it cannot
be reached, the hub side is still removed and the command prints what to delete on the spoke.
Stored credentials that would run a plugin or read a local file on this machine are refused,
and nothing is changed; pass --kubeconfig then.`,
		Example: `  flotilla unjoin eu-1`,
		Args:    exactlyOneName("unjoin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := membership.UnjoinOptions{
				Name:     args[0],
				Progress: func(line string) { _, _ = fmt.Fprintln(cmd.OutOrStdout(), line) },
			}
			if kubeconfig != "" {
				spoke, err := loadKubeconfig(kubeconfig, kubeContext)
				if err != nil {
					return fmt.Errorf("spoke kubeconfig %s: %w", kubeconfig, err)
				}
				opts.Spoke = spoke
			}
			hub, err := hf.client()
			if err != nil {
				return err
			}
			return membership.Unjoin(cmd.Context(), hub, opts)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the spoke (default: the credentials stored on the hub)")
	cmd.Flags().StringVar(&kubeContext, "context", "", "context of the spoke in that kubeconfig")
	return cmd
}

func exactlyOneName(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError(fmt.Errorf("%s takes exactly one cluster name, got %d arguments", verb, len(args)))
		}
		return nil
	}
}

// parseLabels parses key=value pairs and validates them as Kubernetes labels.
func parseLabels(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("--label %q: want key=value", p)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--label %q: key: %s", p, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--label %q: value: %s", p, strings.Join(errs, "; "))
		}
		out[k] = v
	}
	return out, nil
}
