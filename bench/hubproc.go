package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// hubProcess is `flotilla hub` running against the bench hub.
type hubProcess struct {
	cmd    *exec.Cmd
	exited chan error
	log    bytes.Buffer
}

func startHub(binDir, kubeconfig string, extraArgs ...string) (*hubProcess, error) {
	h := &hubProcess{exited: make(chan error, 1)}
	args := append([]string{"hub", "--hub-kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, extraArgs...)
	h.cmd = exec.Command(filepath.Join(binDir, "flotilla"), args...)
	h.cmd.Stdout, h.cmd.Stderr = &h.log, &h.log
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start flotilla hub (run `make build`): %w", err)
	}
	go func() { h.exited <- h.cmd.Wait() }()
	return h, nil
}

func (h *hubProcess) pid() int { return h.cmd.Process.Pid }

// stop ends the process with SIGTERM, or SIGKILL after 15 s.
func (h *hubProcess) stop() {
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(15 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
}
