package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flotilla-dev/flotilla/internal/privatefile"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// The files of a local agent, in its directory (AgentOptions.Dir).
const (
	agentName      = "flotilla-agent" // its log is agentName.log, its PID file agentName.pid
	agentTokenFile = "agent.token"
)

// agentTokenLifetime is how long each work token of a local agent is valid; it is renewed
// when half of it has passed, so a dev fleet may run for days.
const agentTokenLifetime = time.Hour

// agentStopGrace is how long an agent has to end after SIGTERM before it is killed.
const agentStopGrace = 10 * time.Second

// RegisterPull registers a local spoke as a pull cluster: a Cluster named name with spec.mode
// Pull, the given labels and taints and no credentials on the hub (the hub never connects to
// it), and its agent's identity, the ServiceAccount flotilla-system/agent-<name>
// (membership.GrantAgent). StartAgent then runs the agent.
func RegisterPull(ctx context.Context, hub client.Client, name string, labels map[string]string, taints []flotillav1.ClusterTaint) error {
	cluster := &flotillav1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull, Taints: taints},
	}
	if err := hub.Create(ctx, cluster); err != nil {
		return fmt.Errorf("create pull cluster %s on the hub: %w", name, err)
	}
	if _, err := membership.GrantAgent(ctx, hub, name); err != nil {
		return fmt.Errorf("create the agent identity of %s: %w", name, err)
	}
	return nil
}

// AgentOptions says which local spoke an agent serves, from which hub, and where it runs.
type AgentOptions struct {
	Flotilla        string       // the flotilla binary
	Dir             string       // where its token, log (flotilla-agent.log) and PID file go
	Cluster         string       // the pull cluster's name on the hub (see RegisterPull)
	WorkURL         string       // the hub's work endpoint (flotilla hub --work-bind-address)
	Hub             *rest.Config // a hub identity allowed to request tokens for the agent's ServiceAccount
	SpokeKubeconfig string       // the spoke the agent delivers to
	ExtraArgs       []string     // more flags for `flotilla agent`
}

// Agent is a `flotilla agent` running as a child process next to a local spoke, with a work
// token that it renews while the agent runs.
type Agent struct {
	prog        *localfleet.Program
	stopRenewal context.CancelFunc
	renewalDone chan struct{}
}

// StartAgent requests a work token for the cluster's agent (a TokenRequest for audience
// clusterwork.Audience, valid agentTokenLifetime), writes it to the agent's directory and starts
// `flotilla agent` with it; until Stop, it writes a fresh token there when half of the last
// one's lifetime has passed (the agent reads the file for every request). Stop the agent with
// Stop, on failure too; it also dies with this process.
func StartAgent(ctx context.Context, opts AgentOptions) (*Agent, error) {
	cs, err := kubernetes.NewForConfig(opts.Hub)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(opts.Dir, agentTokenFile)
	if err := writeAgentToken(ctx, cs, opts.Cluster, tokenFile); err != nil {
		return nil, err
	}
	args := append([]string{"agent", "--cluster", opts.Cluster, "--hub-work-url", opts.WorkURL, "--token-file", tokenFile,
		"--kubeconfig", opts.SpokeKubeconfig, "--log-format", "text"}, opts.ExtraArgs...)
	prog, err := localfleet.StartProgram(opts.Dir, agentName, opts.Flotilla, args...)
	if err != nil {
		return nil, fmt.Errorf("start the agent of %s: %w", opts.Cluster, err)
	}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a := &Agent{prog: prog, stopRenewal: stop, renewalDone: make(chan struct{})}
	go func() {
		defer close(a.renewalDone)
		renewAgentToken(renewCtx, cs, opts.Cluster, tokenFile)
	}()
	return a, nil
}

// PID is the agent's process ID.
func (a *Agent) PID() int { return a.prog.PID() }

// LogPath is the agent's log file.
func (a *Agent) LogPath() string { return a.prog.LogPath() }

// Done is closed when the agent's process has exited.
func (a *Agent) Done() <-chan struct{} { return a.prog.Done() }

// ExitError says how the agent ended, with the last lines of its log.
func (a *Agent) ExitError() error { return a.prog.ExitError() }

// Stop ends the agent by its PID (SIGTERM, then SIGKILL) and its token renewal, and returns
// once both have ended; stopping it again does nothing.
func (a *Agent) Stop() {
	a.stopRenewal()
	<-a.renewalDone
	a.prog.Stop(agentStopGrace)
}

// renewAgentToken writes a fresh token every half lifetime until ctx ends; a failed request is
// tried again every few seconds (the last token stays valid for the other half).
func renewAgentToken(ctx context.Context, cs kubernetes.Interface, cluster, file string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(agentTokenLifetime / 2):
		}
		_ = wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
			return writeAgentToken(ctx, cs, cluster, file) == nil, nil
		})
	}
}

// writeAgentToken requests a work token of the cluster's agent and replaces file with it in one
// rename, so the agent never reads half a token.
func writeAgentToken(ctx context.Context, cs kubernetes.Interface, cluster, file string) error {
	tr, err := cs.CoreV1().ServiceAccounts(membership.Namespace).CreateToken(ctx, membership.AgentServiceAccount(cluster),
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{clusterwork.Audience}, ExpirationSeconds: ptr.To(int64(agentTokenLifetime.Seconds())),
		}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("request a work token for %s's agent (serviceaccount %s/%s): %w",
			cluster, membership.Namespace, membership.AgentServiceAccount(cluster), err)
	}
	return privatefile.Write(file, []byte(tr.Status.Token))
}
