package devenv

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// Options configures Up.
type Options struct {
	Dir    string // where kubeconfigs and plane data go
	Spokes int
	Nodes  int // fake Nodes per spoke
	// PullSpokes is how many of the spokes, the last ones, are pull-mode clusters, each with a
	// `flotilla agent` that Up runs as a child process.
	PullSpokes int
	// HubReplicas, above 1, runs the hub controller as that many `flotilla hub --shard`
	// replicas, child processes that divide the spokes between them (docs/ha.md), instead of
	// one controller in this process.
	HubReplicas int
	// Flotilla is the flotilla binary the agents and replicas run (needed with PullSpokes or
	// HubReplicas).
	Flotilla string
	BinDir   string
	Out      io.Writer
}

// Up starts the dev fleet, prints a line starting with "ready:" and the commands to try, and
// runs until ctx is cancelled; then it stops every process it started and removes what it wrote
// in the directory (ownedEntries), keeping any other file. It uses only a new or empty directory,
// or one an earlier Up set up (see claimDir).
func Up(ctx context.Context, opts Options) error {
	planes, err := Layout(opts.Spokes, opts.Nodes)
	if err != nil {
		return err
	}
	if err := CheckPullSpokes(opts.Spokes, opts.PullSpokes); err != nil {
		return err
	}
	if (opts.PullSpokes > 0 || opts.HubReplicas > 1) && opts.Flotilla == "" {
		return fmt.Errorf("pull spokes and hub replicas need the flotilla binary they run (Options.Flotilla)")
	}
	if opts.PullSpokes > 0 && opts.HubReplicas > 1 {
		return fmt.Errorf("--pull-spokes and --hub-replicas cannot be combined yet: the agents would need each replica's work endpoint")
	}
	out := opts.Out
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	if err := claimDir(dir, out); err != nil {
		return err
	}
	defer func() {
		if err := cleanDir(dir, ownedEntries(planeNames(planes))); err != nil {
			_, _ = fmt.Fprintf(out, "could not remove everything dev up wrote: %v\n", err)
		}
	}()

	started := time.Now()
	_, _ = fmt.Fprintf(out, "starting a hub and %d spokes in %s (etcd, kube-apiserver, controllers, kwok fake nodes)...\n", opts.Spokes, opts.Dir)
	fleet, err := localfleet.Start(ctx, localfleet.Options{
		Dir:      filepath.Join(dir, planesDir),
		BinDir:   opts.BinDir,
		Planes:   planes,
		Progress: out,
	})
	if err != nil {
		return err
	}
	defer func() {
		_, _ = fmt.Fprintln(out, "stopping every process of the dev fleet...")
		fleet.Stop()
		_, _ = fmt.Fprintln(out, "stopped.")
	}()
	if err := writeKubeconfigs(fleet, dir); err != nil {
		return err
	}
	hubCtx, stopHub := context.WithCancel(ctx)
	hubDone, workURL, err := startHub(hubCtx, fleet, dir, opts, out)
	defer func() {
		stopHub()
		if hubDone != nil {
			<-hubDone
		}
	}()
	if err != nil {
		return err
	}
	agents, err := startAgents(ctx, fleet, opts, dir, workURL)
	defer func() {
		for _, a := range agents {
			a.Stop()
		}
	}()
	if err != nil {
		return err
	}
	printReady(out, fleet, opts.Dir, time.Since(started))
	agentExited := make(chan *runningAgent, len(agents))
	for _, a := range agents {
		go func() {
			<-a.Done()
			agentExited <- a
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-hubDone:
		hubDone = nil
		return fmt.Errorf("hub controller stopped: %w (see %s)", err, filepath.Join(opts.Dir, hubLogFile))
	case a := <-agentExited:
		return fmt.Errorf("the agent of %s stopped: %w", a.cluster, a.ExitError())
	}
}

// runningAgent is a pull spoke's agent that Up started.
type runningAgent struct {
	*Agent
	cluster string
}

// startAgents starts the agent of every pull spoke (the last opts.PullSpokes), each in its
// plane's directory, and returns those it started, to be stopped on failure too.
func startAgents(ctx context.Context, fleet *localfleet.Fleet, opts Options, dir, workURL string) ([]*runningAgent, error) {
	spokes := fleet.Spokes()
	var agents []*runningAgent
	for _, spoke := range spokes[len(spokes)-opts.PullSpokes:] {
		a, err := StartAgent(ctx, AgentOptions{
			Flotilla: opts.Flotilla, Dir: spoke.Dir(), Cluster: spoke.Name(), WorkURL: workURL,
			Hub: fleet.Hub().RESTConfig(), SpokeKubeconfig: KubeconfigPath(dir, spoke.Name()),
		})
		if err != nil {
			return agents, err
		}
		agents = append(agents, &runningAgent{Agent: a, cluster: spoke.Name()})
		logPath := a.LogPath()
		if rel, err := filepath.Rel(dir, logPath); err == nil {
			logPath = filepath.Join(opts.Dir, rel)
		}
		_, _ = fmt.Fprintf(opts.Out, "  %s's agent running: flotilla agent --cluster %s (pid %d, logs: %s)\n", spoke.Name(), spoke.Name(), a.PID(), logPath)
	}
	return agents, nil
}

// CheckPullSpokes checks that --pull-spokes names some of the spokes (0 for none).
func CheckPullSpokes(spokes, pullSpokes int) error {
	if pullSpokes < 0 || pullSpokes > spokes {
		return fmt.Errorf("--pull-spokes must be between 0 and --spokes (%d), got %d", spokes, pullSpokes)
	}
	return nil
}

// KubeconfigPath returns where Up writes the kubeconfig of the named plane.
func KubeconfigPath(dir, plane string) string { return filepath.Join(dir, kubeconfigName(plane)) }

func writeKubeconfigs(fleet *localfleet.Fleet, dir string) error {
	for _, p := range fleet.Planes() {
		if err := p.WriteKubeconfig(KubeconfigPath(dir, p.Name())); err != nil {
			return fmt.Errorf("write kubeconfig of %s: %w", p.Name(), err)
		}
	}
	return nil
}

func printReady(out io.Writer, fleet *localfleet.Fleet, dir string, took time.Duration) {
	spokes := fleet.Spokes()
	_, _ = fmt.Fprintf(out, "ready: hub and %d spokes running (started in %.1fs)\n\n", len(spokes), took.Seconds())
	_, _ = fmt.Fprintf(out, "  %-10s %-28s %-26s %s\n", "PLANE", "SERVER", "LABELS", "KUBECONFIG")
	for _, p := range fleet.Planes() {
		_, _ = fmt.Fprintf(out, "  %-10s %-28s %-26s %s\n", p.Name(), p.Server(), labelString(p.Spec().Labels), KubeconfigPath(dir, p.Name()))
	}
	hub, first := KubeconfigPath(dir, "hub"), KubeconfigPath(dir, spokes[0].Name())
	_, _ = fmt.Fprintf(out, `
Try (from the repository root):
  kubectl --kubeconfig %[1]s get clusters
  bin/flotilla dashboard --hub-kubeconfig %[1]s
  kubectl --kubeconfig %[1]s apply -f examples/propagation.yaml
  kubectl --kubeconfig %[1]s get propagations -n web-demo
  kubectl --kubeconfig %[2]s get deployments -n web-demo
  kubectl --kubeconfig %[1]s apply -f examples/transparent.yaml
  kubectl --kubeconfig %[1]s get deployment cart -n shop
  kubectl --kubeconfig %[1]s apply -f examples/weighted.yaml
  kubectl --kubeconfig %[1]s apply -f examples/failover.yaml
  kubectl --kubeconfig %[1]s apply -f examples/crd-everywhere.yaml
  kubectl --kubeconfig %[1]s wait --for=condition=Established crd/backups.example.com
  kubectl --kubeconfig %[1]s apply -f examples/backup.yaml
  kubectl --kubeconfig %[1]s apply -f examples/drift-and-overrides.yaml

Press Ctrl-C to stop the fleet; nothing is left running.
`, hub, first)
}

func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
