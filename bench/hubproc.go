package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// process is a program the benchmark runs beside the fleet: `flotilla hub` (kro's controller,
// for the instance baseline, is localfleet's). It dies with the benchmark.
type process struct {
	cmd    *exec.Cmd
	exited chan error
	log    syncBuffer
}

// syncBuffer is the output of a process, written by its pipes while the benchmark reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func startProcess(path string, args ...string) (*process, error) {
	p := &process{exited: make(chan error, 1)}
	p.cmd = exec.Command(path, args...)
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.exited <- p.cmd.Wait() }()
	return p, nil
}

// startHub runs `flotilla hub` against the bench hub.
func startHub(binDir, kubeconfig string, extraArgs ...string) (*process, error) {
	args := append([]string{"hub", "--hub-kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, extraArgs...)
	p, err := startProcess(filepath.Join(binDir, "flotilla"), args...)
	if err != nil {
		return nil, fmt.Errorf("start flotilla hub (run `make build`): %w", err)
	}
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the process with SIGTERM, or SIGKILL after 15 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
