package cli

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

func newAgentCommand() *cobra.Command {
	var opts agent.Options
	var kubeconfig, kubeContext string
	var zapOpts zap.Options
	logFormat := logFormatJSON
	cmd := &cobra.Command{
		Use:     "agent --cluster NAME --hub-work-url URL (--hub-kubeconfig FILE | --token-file FILE)",
		Short:   "Run a pull-mode agent on a spoke the hub cannot reach",
		GroupID: groupOperate,
		Long: `Run the agent of a pull-mode cluster (Cluster.spec.mode Pull): the hub never connects to
such a spoke; the agent, on the spoke, fetches the cluster's work from the hub's work endpoint
(flotilla hub --work-bind-address) and delivers it there with the same engine as push mode:
server-side apply under Flotilla's field manager, ownership marks, tenancy checks, drift
correction from the spoke's own watches, prune rules and budgets. It posts each owner's result
back when it changes, and the hub writes it into the owner's Delivery record of the cluster, so
the owner's status on the hub counts the cluster.

Its hub identity is the ServiceAccount flotilla-system/agent-NAME on the hub, which may read
its own cluster's work and write its own cluster's results, nothing else. Give it either:
  --hub-kubeconfig FILE: the kubeconfig ` + "`flotilla join NAME --mode pull --agent-kubeconfig FILE`" + `
    wrote, holding a credential for the hub API server that may create tokens for agent-NAME
    and nothing else. With it the agent requests its work tokens (audience
    ` + clusterwork.Audience + `, valid 1h, renewed when 80% of that has passed, and at once
    when the endpoint answers 401), and renews the credential itself when 80% of its life has
    passed, writing it back to FILE (a temporary file renamed over it, mode 0600): FILE must
    be writable, and a restarted agent goes on with the renewed credential. If the agent is
    stopped past the credential's expiry, join again. No token is ever logged.
  --hub-kubeconfig-secret NAMESPACE/NAME: the same kubeconfig in a Secret on the spoke
    (` + "`flotilla join NAME --mode pull --kubeconfig SPOKE`" + ` stores it in
    flotilla-system/flotilla-agent-hub), read and renewed there with the agent's spoke
    credentials, which then need get and update on that Secret.
  --token-file FILE: a token for audience ` + clusterwork.Audience + ` (a projected ServiceAccount
    token, or 'kubectl create token agent-NAME -n flotilla-system --audience ` + clusterwork.Audience + `'
    on the hub), read again for every request, so a rotated token is picked up; renewing it
    is up to you.
` + "`flotilla unjoin NAME`" + ` deletes agent-NAME on the hub, which revokes every token at once: the
agent is then refused, keeps what it delivered and deletes nothing.

When the hub does not answer, or answers with an error, the agent changes nothing: the last
work stays applied and drift-corrected and nothing is deleted; it logs that it keeps the last
work, and delivers the hub's current work when it answers again. An owner the hub's successful
answers leave out is removed from the spoke only after --removal-grace (10 minutes unless told
otherwise), counted from the first successful answer that left it out; failed requests never
count. See docs/clusters.md, "Pull mode".

The spoke is reached with the agent's in-cluster credentials, or with --kubeconfig (development).`,
		Example: `  # With the hub kubeconfig ` + "`flotilla join edge-1 --mode pull`" + ` wrote (renewed in place)
  flotilla agent --cluster edge-1 --hub-work-url https://hub.example.com:9443 \
    --hub-kubeconfig /var/lib/flotilla/hub.kubeconfig --hub-ca-file /etc/flotilla/hub-ca.crt

  # In a Pod on the spoke, with a projected token for the work audience
  flotilla agent --cluster edge-1 --hub-work-url https://hub.example.com:9443 \
    --token-file /var/run/secrets/flotilla/token --hub-ca-file /etc/flotilla/hub-ca.crt

  # Next to a local spoke, against a hub serving its work endpoint on a loopback address
  flotilla agent --cluster edge-1 --hub-work-url http://127.0.0.1:9443 --token-file token \
    --kubeconfig ~/.kube/edge-1.yaml --log-format text`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Cluster == "" || opts.WorkURL == "" {
				return usageError(fmt.Errorf("--cluster and --hub-work-url are required"))
			}
			if n := btoi(opts.TokenFile != "") + btoi(opts.HubKubeconfig != "") + btoi(opts.HubKubeconfigSecret != ""); n != 1 {
				return usageError(fmt.Errorf("give the agent's hub credential with one of --hub-kubeconfig, --hub-kubeconfig-secret " +
					"(written by `flotilla join NAME --mode pull`) and --token-file"))
			}
			if !cmd.Flags().Changed("log-format") {
				logFormat = ""
			}
			logger, err := hubLogger(logFormat, zapOpts)
			if err != nil {
				return err
			}
			ctrl.SetLogger(logger)
			if kubeconfig != "" {
				opts.Spoke, err = loadKubeconfig(kubeconfig, kubeContext)
				if err != nil {
					return fmt.Errorf("spoke kubeconfig %s: %w", kubeconfig, err)
				}
			} else if opts.Spoke, err = rest.InClusterConfig(); err != nil {
				return fmt.Errorf("the spoke's in-cluster credentials: %w (outside a Pod, pass --kubeconfig)", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return agent.Run(ctrl.LoggerInto(ctx, logger), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Cluster, "cluster", "", "the cluster's name on the hub (required)")
	f.StringVar(&opts.WorkURL, "hub-work-url", "", "URL of the hub's work endpoint, e.g. https://hub.example.com:9443 (required)")
	f.StringVar(&opts.HubKubeconfig, "hub-kubeconfig", "", "the agent's hub kubeconfig (written by flotilla join --mode pull --agent-kubeconfig): work tokens are requested with it, and it is renewed in place")
	f.StringVar(&opts.HubKubeconfigSecret, "hub-kubeconfig-secret", "", "instead: NAMESPACE/NAME of a Secret on the spoke holding that kubeconfig (flotilla join --mode pull --kubeconfig stores "+
		membership.Namespace+"/"+membership.AgentCredentialSecret+"), read and renewed there with the spoke credentials")
	f.StringVar(&opts.TokenFile, "token-file", "", "instead of --hub-kubeconfig: a file holding the agent's token for audience "+clusterwork.Audience+", read again for every request")
	f.StringVar(&opts.CAFile, "hub-ca-file", "", "CA bundle (PEM) the work endpoint's certificate is checked against (default: the system's roots)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the spoke (default: the in-cluster credentials)")
	f.StringVar(&kubeContext, "context", "", "context of the spoke in that kubeconfig (default: its current context)")
	f.DurationVar(&opts.PollInterval, "poll-interval", agent.DefaultPollInterval, "how long the hub may hold a request for work that has not changed (a change is answered at once): an idle agent asks once per interval")
	f.DurationVar(&opts.RemovalGrace, "removal-grace", agent.DefaultRemovalGrace, "how long an owner must stay out of the hub's successful answers before its objects are removed from the spoke; failed requests never count")
	f.StringVar(&logFormat, "log-format", logFormat, "log format: json or text; the --zap-* flags tune the rest")
	goFlags := flag.NewFlagSet("flotilla", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	f.AddGoFlagSet(goFlags)
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
