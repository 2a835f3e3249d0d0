package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// replicasDir holds the directories of the hub replicas (HubReplicas > 1), inside planesDir.
const replicasDir = "hub-replicas"

// replicaStopGrace is how long a hub replica has to end after SIGTERM before it is killed.
const replicaStopGrace = 15 * time.Second

// startReplicas runs n `flotilla hub --shard` replicas, hub-0 to hub-<n-1>, as child processes
// against the hub's admin kubeconfig, each in its own directory with its log (flotilla-hub.log
// there). They are stopped by PID when ctx ends, and then done is closed. A replica that exits
// meanwhile (killed to watch the others take its clusters over) is said on out; the others
// go on.
func startReplicas(ctx context.Context, flotilla, dir, displayDir string, n int, out io.Writer) (done <-chan error, err error) {
	var progs []*localfleet.Program
	finished := make(chan error, 1)
	stopAll := func() {
		for _, p := range progs {
			p.Stop(replicaStopGrace)
		}
	}
	for i := range n {
		name := fmt.Sprintf("hub-%d", i)
		replicaDir := filepath.Join(dir, planesDir, replicasDir, name)
		if err := os.MkdirAll(replicaDir, 0o700); err != nil {
			stopAll()
			return nil, err
		}
		p, err := localfleet.StartProgram(replicaDir, "flotilla-hub", flotilla, "hub",
			"--hub-kubeconfig", filepath.Join(dir, "hub.kubeconfig"), "--shard", "--replica-name", name,
			"--leader-elect", "--metrics-bind-address=0", "--health-probe-bind-address=0",
			"--probe-interval", devProbeInterval.String(), "--log-format", "text")
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("start hub replica %s: %w", name, err)
		}
		progs = append(progs, p)
		_, _ = fmt.Fprintf(out, "  hub replica %s running, pid %d (logs: %s)\n", name, p.PID(),
			filepath.Join(displayDir, planesDir, replicasDir, name, "flotilla-hub.log"))
		go func() {
			select {
			case <-p.Done():
				if ctx.Err() == nil {
					_, _ = fmt.Fprintf(out, "hub replica %s (pid %d) exited; the others take its clusters over once its Lease expires (15s): %v\n",
						name, p.PID(), p.ExitError())
				}
			case <-ctx.Done():
			}
		}()
	}
	go func() {
		<-ctx.Done()
		stopAll()
		close(finished)
	}()
	return finished, nil
}
