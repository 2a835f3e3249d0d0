package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-dev/flotilla/internal/membership"
)

func newJoinCommand(hf *hubFlags) *cobra.Command {
	var (
		kubeconfig, kubeContext, role string
		labels, apiGroups             []string
		lifetime                      time.Duration
		pull                          pullFlags
	)
	cmd := &cobra.Command{
		Use:     "join NAME --kubeconfig FILE | join NAME --mode pull --agent-kubeconfig FILE",
		Short:   "Join a spoke cluster to the fleet (push: the hub delivers; pull: an agent on the spoke fetches)",
		GroupID: groupFleet,
		Long: `Join a spoke cluster to the hub under NAME, a DNS-1123 label (at most 63 characters:
lowercase letters, digits and '-', starting and ending with a letter or digit).

Your own credentials (--kubeconfig, which needs admin rights on the spoke) are used once, for
this command, and are never stored. On the spoke, join creates:
  - the namespace flotilla-system and the ServiceAccount flotilla there: Flotilla's identity;
  - the ClusterRole flotilla-delivery and the ClusterRoleBinding flotilla, which grant it
    (with --role, only the binding);
  - the Role and RoleBinding flotilla-self, which let it request tokens for itself and
    delete itself, nothing more;
  - a Secret flotilla-token-XXXXX that its token is bound to: deleting it revokes the token.
Each carries the label flotilla.dev/hub with this hub's ID (the UID of its kube-system
namespace). Join refuses to take over an object of these names that join from this hub did not
create, and ` + "`flotilla unjoin`" + ` removes only these objects, which revokes the token.

What it grants. flotilla-delivery allows get, list, watch, create, update, patch, delete and
deletecollection on what the spoke serves at join, named rather than "*": a group whose
resources have no subresource but status and scale (apps, batch, every CRD group...) whole, so
CRDs added to it later are covered; any other group (the core group, certificates.k8s.io...)
by its top-level resources and their status and scale. Subresources such as
serviceaccounts/token, pods/exec, pods/attach, pods/portforward, pods/ephemeralcontainers and
*/proxy are not granted, nor bindings or tokenreviews. A group the spoke does not serve yet is
covered only if named with --api-groups (default kro.run, where fleet APIs' CRDs go): name the
groups of the CRDs the hub will deliver there, or join again after they are installed.
Reading is allowed for /metrics, /healthz, /livez, /readyz and /version only.

It withholds escalate, bind and impersonate (but for the identities below): the spoke then
refuses any delivered Role, ClusterRole or binding that grants more than Flotilla holds, such
as a binding to cluster-admin, edit or admin. It is not a sandbox: whoever controls Flotilla
can still create Pods that run as any ServiceAccount of the spoke.

A namespaced owner's deliveries (a Propagation, a transparent-mode object, a fleet API
instance under tenancy: Namespace) are made as the identity of that namespace,
system:serviceaccount:flotilla-system:flotilla-ns-NAMESPACE, which Flotilla impersonates
(flotilla-self allows impersonating ServiceAccounts of flotilla-system, no others) and which the
RoleBinding flotilla-namespace, written in that namespace on first delivery, grants the same
ClusterRole there only: the spoke itself refuses such an owner's writes elsewhere.

To grant less, create a ClusterRole on the spoke and name it with --role; join binds it instead
of creating flotilla-delivery. Deliveries it does not allow fail, per object, with
"forbidden by the spoke's grant (ClusterRole NAME)". To deliver Roles or bindings that need more, name
--role cluster-admin.

Token lifetime and rotation. The token comes from the TokenRequest API and is valid for
--token-lifetime (default 24h, between 10m and 168h). The hub renews it when a third of its
lifetime is left (the token it replaces stays valid until it expires) and writes the new one
into the hub Secret; the Cluster's CredentialsValid condition and the metric
flotilla_cluster_credential_expiry_seconds show the state. If the hub is stopped for longer than
a third of the lifetime, the token expires: join again.

On the hub, join stores a kubeconfig with that token in the Secret flotilla-system/NAME-kubeconfig
and creates the Cluster NAME with the given labels. Joining again under the same name issues a
new token bound to a new Secret, stores it, then deletes the previous Secret, which revokes the
old token; joining the same API server under a second name is refused.

Pull mode (--mode pull), for a spoke the hub cannot reach or must not hold credentials for:
the hub never connects to the spoke, and stores no credentials for it. On the hub join
creates the Cluster NAME with spec.mode Pull, the ServiceAccount flotilla-system/agent-NAME
(the agent's identity: the work endpoint serves it this cluster's work alone), and the Role
and RoleBinding flotilla-system/agent-NAME, which let it create tokens for itself and nothing
else. It then issues the agent's bootstrap credential, a token of agent-NAME for the hub API
server valid for --token-lifetime, and writes a kubeconfig with it, the hub's address
(--hub-server, default your hub connection's) and CA to --agent-kubeconfig (mode 0600; the
token is never printed); copy that file to the spoke. Or, with --kubeconfig (the spoke's,
used once by this command, never stored), it stores that kubeconfig in the Secret
flotilla-system/flotilla-agent-hub on the spoke instead. Then run the agent command join
prints: the agent requests its short-lived work tokens with the credential and renews it,
writing it back (to the file or the Secret), before it expires. Joining again re-issues the credential (earlier ones stay valid until they expire
or stop being renewed); ` + "`flotilla unjoin NAME`" + ` deletes the ServiceAccount, which revokes
every token of the agent at once. A cluster joined in one mode is not joined in the other:
unjoin it first (what runs on the spoke stays).`,
		Example: `  flotilla join eu-1 --kubeconfig ~/.kube/eu-1.yaml --label region=eu-west --label env=prod
  flotilla join staging --kubeconfig ~/.kube/config --context staging-admin
  flotilla join eu-2 --kubeconfig ~/.kube/eu-2.yaml --role flotilla-apps --token-lifetime 8h

  # A spoke behind NAT: join on the hub alone, then run the agent on the spoke
  flotilla join edge-1 --mode pull --label site=store-42 --agent-kubeconfig edge-1-hub.kubeconfig \
    --hub-server https://hub.example.com:6443 --hub-work-url https://hub.example.com:9443`,
		Args: exactlyOneName("join"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := membership.ValidateName(name); err != nil {
				return usageError(err)
			}
			switch pull.mode {
			case "push":
				if err := pull.pushOnly(cmd); err != nil {
					return err
				}
			case "pull":
				return joinPull(cmd, hf, name, labels, lifetime, pull, kubeconfig, kubeContext)
			default:
				return usageError(fmt.Errorf("--mode %q: want push or pull", pull.mode))
			}
			if err := membership.ValidateRole(role); err != nil {
				return usageError(err)
			}
			if err := membership.ValidateAPIGroups(apiGroups); err != nil {
				return usageError(fmt.Errorf("--api-groups: %w", err))
			}
			if err := membership.ValidateTokenLifetime(lifetime); err != nil {
				return usageError(fmt.Errorf("--token-lifetime: %w", err))
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
				Name: name, Spoke: spoke, Labels: parsed, Role: role, APIGroups: apiGroups, TokenLifetime: lifetime,
				Progress: func(line string) { _, _ = fmt.Fprintln(cmd.OutOrStdout(), line) },
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the spoke with admin rights (required)")
	f.StringVar(&kubeContext, "context", "", "context of the spoke in that kubeconfig (default: its current context)")
	f.StringArrayVar(&labels, "label", nil, "label for the Cluster, key=value; repeat for more")
	f.StringVar(&role, "role", "", "existing ClusterRole on the spoke to grant Flotilla instead of creating "+membership.DeliveryClusterRole)
	f.StringSliceVar(&apiGroups, "api-groups", membership.DefaultAPIGroups,
		"API groups of CRDs the hub will deliver, granted whole before the spoke serves them (groups served at join are granted anyway)")
	f.DurationVar(&lifetime, "token-lifetime", membership.DefaultTokenLifetime,
		fmt.Sprintf("how long each token is valid (%s to %s); the hub renews it when a third is left (pull: the agent's credential, which the agent renews at 80%%)", membership.MinTokenLifetime, membership.MaxTokenLifetime))
	pull.register(cmd)
	return cmd
}

func newUnjoinCommand(hf *hubFlags) *cobra.Command {
	var kubeconfig, kubeContext string
	cmd := &cobra.Command{
		Use:     "unjoin NAME",
		Short:   "Remove a spoke cluster from the fleet, leaving its workloads alone",
		GroupID: groupFleet,
		Long: `Remove the Cluster NAME, its credentials Secret and its pull-mode agent's identity (the
ServiceAccount flotilla-system/agent-NAME, which revokes the agent's tokens) from the hub, and
from the spoke what ` + "`flotilla join`" + ` created there from this hub: the ServiceAccount (which
revokes every token issued for it), the Secrets its tokens are bound to, its ClusterRoleBinding, flotilla-delivery
and flotilla-self, and the RoleBindings flotilla-namespace that granted the namespace
identities. An object of join's names that join from this hub did not create (it lacks this
hub's flotilla.dev/hub label) is left in place. Nothing else on the spoke is touched:
workloads Flotilla delivered keep running.

The spoke is reached with the stored credentials, or with --kubeconfig if given. If it cannot
be reached, the hub side is still removed and the command prints what to delete on the spoke.
Stored credentials that would run a plugin or read a local file on this machine are refused,
and nothing is changed; pass --kubeconfig then.

A Cluster imported by the hub (from a kubeconfig Secret, Cluster API, a ClusterProfile or Argo
CD: the SOURCE column of ` + "`kubectl get clusters`" + `) is refused, and nothing is changed:
the importer would create it again, and join created nothing on its spoke. The refusal names
the object it came from and how to remove it there.

A pull-mode cluster (joined with --mode pull): the hub side only, the Cluster, the
ServiceAccount flotilla-system/agent-NAME (the hub then refuses every token of the agent: at
once, and within 10s at the work endpoint) and the Role and RoleBinding agent-NAME join made;
with --kubeconfig also the Secret flotilla-system/flotilla-agent-hub on the spoke, if join
from this hub stored it there. The agent keeps what it delivered and deletes nothing: stop it
on the spoke.`,
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
