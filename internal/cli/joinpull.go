package cli

import (
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/flotilla-dev/flotilla/internal/privatefile"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/flotilla-dev/flotilla/internal/membership"
)

// pullFlags are join's flags for pull mode.
type pullFlags struct {
	mode            string
	agentKubeconfig string
	hubServer       string
	hubWorkURL      string
}

func (p *pullFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.mode, "mode", "push", "push: the hub connects to the spoke and delivers; pull: an agent on the spoke fetches the work, and the hub never connects to it")
	f.StringVar(&p.agentKubeconfig, "agent-kubeconfig", "", "pull: file to write the agent's hub kubeconfig to (mode 0600; it holds the agent's credential); or give --kubeconfig to store it in a Secret on the spoke")
	f.StringVar(&p.hubServer, "hub-server", "", "pull: the hub API server's address as the spoke reaches it, written into the agent's kubeconfig (default: your hub connection's)")
	f.StringVar(&p.hubWorkURL, "hub-work-url", "", "pull: the hub's work endpoint as the spoke reaches it (flotilla hub --work-bind-address), to print the agent's command line with it")
}

// pushOnly refuses pull-mode flags in push mode.
func (p *pullFlags) pushOnly(cmd *cobra.Command) error {
	for _, name := range []string{"agent-kubeconfig", "hub-server", "hub-work-url"} {
		if cmd.Flags().Changed(name) {
			return usageError(fmt.Errorf("--%s is for --mode pull only", name))
		}
	}
	return nil
}

// joinPull joins name in pull mode: on the hub alone, then writes the agent's credential to a
// file, or with spokeKubeconfig (the operator's, used once) into a Secret on the spoke.
func joinPull(cmd *cobra.Command, hf *hubFlags, name string, labels []string, lifetime time.Duration, p pullFlags,
	spokeKubeconfig, spokeContext string) error {
	for _, flag := range []string{"role", "api-groups"} {
		if cmd.Flags().Changed(flag) {
			return usageError(fmt.Errorf("--%s is for --mode push only: in pull mode the hub never connects to the spoke, and "+
				"the agent delivers with its own credentials there", flag))
		}
	}
	if (p.agentKubeconfig == "") == (spokeKubeconfig == "") {
		return usageError(fmt.Errorf("--mode pull needs one of --agent-kubeconfig FILE (the file join writes the agent's hub credential to) " +
			"and --kubeconfig SPOKE (the spoke's kubeconfig, used once to store it in the Secret " + membership.Namespace + "/" +
			membership.AgentCredentialSecret + " there)"))
	}
	if err := membership.ValidateTokenLifetime(lifetime); err != nil {
		return usageError(fmt.Errorf("--token-lifetime: %w", err))
	}
	for flag, value := range map[string]string{"hub-server": p.hubServer, "hub-work-url": p.hubWorkURL} {
		if u, err := url.Parse(value); value != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
			return usageError(fmt.Errorf("--%s %q: want a URL such as https://hub.example.com:6443", flag, value))
		}
	}
	parsed, err := parseLabels(labels)
	if err != nil {
		return usageError(err)
	}
	var spoke *rest.Config
	if spokeKubeconfig != "" {
		if spoke, err = loadKubeconfig(spokeKubeconfig, spokeContext); err != nil {
			return fmt.Errorf("spoke kubeconfig %s: %w", spokeKubeconfig, err)
		}
	}
	hubCfg, err := hf.restConfig()
	if err != nil {
		return err
	}
	hub, err := hf.client()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	cred, err := membership.JoinPull(cmd.Context(), hub, hubCfg, membership.PullJoinOptions{
		Name: name, Labels: parsed, CredentialLifetime: lifetime, HubServer: p.hubServer,
		Progress: func(line string) { _, _ = fmt.Fprintln(out, line) },
	})
	if err != nil {
		return err
	}
	workURL := p.hubWorkURL
	if workURL == "" {
		workURL = "https://HUB-WORK-ENDPOINT:9443"
	}
	expires := cred.Expires.UTC().Format(time.RFC3339)
	if spoke != nil {
		if err := membership.StoreAgentCredential(cmd.Context(), hub, spoke, name, cred.Kubeconfig); err != nil {
			return fmt.Errorf("cluster %s joined, but the agent's credential could not be stored on the spoke (%w); join again to issue another", name, err)
		}
		ref := membership.Namespace + "/" + membership.AgentCredentialSecret
		_, _ = fmt.Fprintf(out, "spoke: secret %s holds the agent's hub kubeconfig (the credential is valid until %s, and the agent renews it there)\n", ref, expires)
		_, _ = fmt.Fprintf(out, "Next, run the agent on the spoke, with spoke credentials that may get and update that Secret:\n"+
			"  flotilla agent --cluster %s --hub-work-url %s --hub-kubeconfig-secret %s\n", name, workURL, ref)
	} else {
		if err := privatefile.Write(p.agentKubeconfig, cred.Kubeconfig); err != nil {
			return fmt.Errorf("cluster %s joined, but the agent's kubeconfig could not be written (%w); join again to issue another", name, err)
		}
		_, _ = fmt.Fprintf(out, "agent: its hub kubeconfig is in %s (mode 0600; the credential is valid until %s, and the agent renews it)\n",
			p.agentKubeconfig, expires)
		_, _ = fmt.Fprintf(out, "Next, copy %s to the spoke (a writable path) and run the agent there (in a Pod, without --kubeconfig):\n"+
			"  flotilla agent --cluster %s --hub-work-url %s --hub-kubeconfig %s\n",
			p.agentKubeconfig, name, workURL, filepath.Base(p.agentKubeconfig))
	}
	if p.hubWorkURL == "" {
		_, _ = fmt.Fprintln(out, "  (--hub-work-url: where the spoke reaches the hub's work endpoint, `flotilla hub --work-bind-address`)")
	}
	return nil
}
