package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/devenv"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

func newDevCommand() *cobra.Command {
	dev := &cobra.Command{
		Use:     "dev",
		Short:   "Run a local fleet for trying and developing Flotilla",
		GroupID: groupDev,
	}
	dev.AddCommand(newDevUpCommand())
	return requireSubcommand(dev)
}

func newDevUpCommand() *cobra.Command {
	opts := devenv.Options{Dir: ".flotilla/dev", Spokes: 3, Nodes: 2}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local hub and spokes on this machine and keep them running until Ctrl-C",
		Long: `Start a local fleet: a hub and N spoke clusters, each a real etcd and kube-apiserver on
127.0.0.1. Spokes also run kube-controller-manager, kube-scheduler and kwok with fake Nodes, so
Deployments on them become Available without running containers.

Spokes are named spoke-1, spoke-2, ... and labelled with a region (eu-west, us-east, ap-south)
and an env (prod, staging) in turn. A kubeconfig for every plane is written to --dir.

--pull-spokes N makes the last N spokes pull-mode clusters (Cluster spec.mode Pull): the hub
holds no credentials for them and never connects; it serves their work on a loopback work
endpoint, and dev up runs a 'flotilla agent' for each, as a child process next to its spoke,
with a work token it renews (logs: --dir/planes/spoke-N/flotilla-agent.log). The others are
registered with 'flotilla join', and the last of them through a kubeconfig Secret.

--hub-replicas N (2 or more) runs the hub controller as N 'flotilla hub --shard' replicas,
child processes named hub-0, hub-1, ... that divide the spokes between them (docs/ha.md); dev
up prints each one's PID and log. Kill one to watch the others take its spokes over: the
Leases flotilla-system/flotilla-shard-<spoke> on the hub say which replica holds which spoke.

--dir must be a new or empty directory, or one an earlier 'flotilla dev up' set up (it holds a
.flotilla-dev marker file). From such a directory, when no dev up runs there, it removes what
the earlier run wrote (planes/, the kubeconfigs, flotilla-hub.log, dev.pid) and keeps any other
file. It refuses any other directory, your home directory, the filesystem root and the root of
a git repository.

The command builds nothing: the Kubernetes binaries come from 'make tools' (make dev runs it).
It prints a line starting with "ready:" and the commands to try, and runs until interrupted;
Ctrl-C or SIGTERM stops every process it started and removes what it wrote in --dir; files
you put there stay.`,
		Example: `  # Three spokes (the default), kubeconfigs in .flotilla/dev
  flotilla dev up

  # One spoke with five fake nodes, kubeconfigs in /tmp/fleet
  flotilla dev up --spokes 1 --nodes 5 --dir /tmp/fleet

  # Three spokes, spoke-3 in pull mode with its agent
  flotilla dev up --pull-spokes 1

  # Three hub replicas dividing the three spokes
  flotilla dev up --hub-replicas 3`,
		Args: cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if _, err := devenv.Layout(opts.Spokes, opts.Nodes); err != nil {
				return usageError(err)
			}
			return usageError(devenv.CheckPullSpokes(opts.Spokes, opts.PullSpokes))
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Out = cmd.OutOrStdout()
			if opts.PullSpokes > 0 || opts.HubReplicas > 1 {
				self, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find the flotilla binary the agents and replicas run: %w", err)
				}
				opts.Flotilla = self
			}
			// A second Ctrl-C while stopping ends the process at once; its children get SIGKILL.
			go func() { <-ctx.Done(); stop() }()
			return devenv.Up(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Spokes, "spokes", opts.Spokes, "number of spoke clusters (1 to 10)")
	f.IntVar(&opts.Nodes, "nodes", opts.Nodes, "fake Nodes per spoke (1 to 50)")
	f.IntVar(&opts.PullSpokes, "pull-spokes", 0, "how many of the spokes, the last ones, run in pull mode, each with a flotilla agent (0 to --spokes)")
	f.IntVar(&opts.HubReplicas, "hub-replicas", 1, "hub controller replicas; 2 or more run as 'flotilla hub --shard' child processes that divide the spokes (not with --pull-spokes)")
	f.StringVar(&opts.Dir, "dir", opts.Dir, "new or empty directory for kubeconfigs and plane data (or one an earlier dev up set up)")
	f.StringVar(&opts.BinDir, "bin-dir", "", "directory with the Kubernetes binaries (default: beside flotilla, or $"+localfleet.BinDirEnv+")")
	return cmd
}
