package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// hubProc is one running `flotilla hub` process, logging to its own file.
type hubProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// hubSet runs the hub controller's replicas as child processes of the soak, each restartable
// after a SIGKILL. With one replica it runs without leader election, as the bench does; with
// more, they elect a leader on the hub, and with shard they also divide the spokes between them
// (`flotilla hub --shard`, docs/ha.md).
type hubSet struct {
	bin, kubeconfig, logDir string
	shard                   bool

	mu    sync.Mutex
	procs []*hubProc
	lives []int // per replica, how many times it was started
}

func newHubSet(binDir, kubeconfig, logDir string, replicas int) *hubSet {
	return &hubSet{bin: filepath.Join(binDir, "flotilla"), kubeconfig: kubeconfig, logDir: logDir,
		procs: make([]*hubProc, replicas), lives: make([]int, replicas)}
}

// start starts replica i (which must not be running).
func (h *hubSet) start(i int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	args := []string{"hub", "--hub-kubeconfig", h.kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		fmt.Sprintf("--leader-elect=%t", len(h.procs) > 1)}
	if h.shard {
		args = append(args, "--shard", fmt.Sprintf("--replica-name=hub-%d", i))
	}
	log, err := os.OpenFile(h.logPath(i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(log, "\n===== soak: start %d of replica %d at %s =====\n", h.lives[i]+1, i, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(h.bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("start flotilla hub (run `make build`, or pass --bin-dir with flotilla in it): %w", err)
	}
	p := &hubProc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(p.exited)
	}()
	h.procs[i] = p
	h.lives[i]++
	return nil
}

func (h *hubSet) logPath(i int) string {
	return filepath.Join(h.logDir, fmt.Sprintf("flotilla-hub-%d.log", i))
}

// kill sends SIGKILL to replica i's process, by its PID, and waits until it is reaped.
func (h *hubSet) kill(i int) (int, error) {
	h.mu.Lock()
	p := h.procs[i]
	h.mu.Unlock()
	if p == nil {
		return 0, fmt.Errorf("hub replica %d is not running", i)
	}
	pid := p.cmd.Process.Pid
	if err := p.cmd.Process.Kill(); err != nil {
		return pid, err
	}
	<-p.exited
	h.mu.Lock()
	h.procs[i] = nil
	h.mu.Unlock()
	return pid, nil
}

// exitedUnexpectedly returns the replicas whose process ended without the soak killing it.
func (h *hubSet) exitedUnexpectedly() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, p := range h.procs {
		if p == nil {
			continue
		}
		select {
		case <-p.exited:
			out = append(out, i)
		default:
		}
	}
	return out
}

// pids returns, per running replica, its PID and life number.
func (h *hubSet) pids() map[int][2]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int][2]int{}
	for i, p := range h.procs {
		if p != nil {
			out[i] = [2]int{p.cmd.Process.Pid, h.lives[i]}
		}
	}
	return out
}

// stop ends every replica with SIGTERM, then SIGKILL after 15 s, by PID.
func (h *hubSet) stop() {
	h.mu.Lock()
	procs := append([]*hubProc(nil), h.procs...)
	h.mu.Unlock()
	for _, p := range procs {
		if p == nil {
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// sampleRSS records every running replica's RSS every sampleEvery until stop is closed.
func (h *hubSet) sampleRSS(stop <-chan struct{}, out *[]rssSample, mu *sync.Mutex) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for i, pl := range h.pids() {
			if b := rssBytes(pl[0]); b > 0 {
				mu.Lock()
				*out = append(*out, rssSample{Replica: i, Life: pl[1], At: time.Now(), Bytes: b})
				mu.Unlock()
			}
		}
	}
}
