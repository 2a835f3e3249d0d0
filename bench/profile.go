package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// profiler reads `flotilla hub --pprof-bind-address`: always its live heap (for the memory
// figures), and CPU and heap profiles while scenarios run when --profile names a directory.
type profiler struct {
	dir  string // "" writes no profiles
	addr string
	done chan struct{}
}

func newProfiler(dir string) (*profiler, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	return &profiler{dir: dir, addr: addr}, nil
}

// hubArgs are the flags that make the hub serve profiles.
func (p *profiler) hubArgs() []string {
	return []string{"--pprof-bind-address=" + p.addr}
}

// liveHeap returns the hub's Go heap right after a forced garbage collection: the bytes its
// live objects take, without the garbage the collector has not reached yet.
func (p *profiler) liveHeap() (uint64, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get("http://" + p.addr + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "# HeapAlloc = "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no HeapAlloc in the hub's heap profile (%v)", s.Err())
}

// goroutines returns how many goroutines the hub runs.
func (p *profiler) goroutines() (int, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get("http://" + p.addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	if s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "goroutine profile: total "); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no total in the hub's goroutine profile (%v)", s.Err())
}

// cpu starts a CPU profile of the next seconds, written to <dir>/<name>.cpu.pprof.
func (p *profiler) cpu(name string, seconds int) {
	if p.dir == "" {
		return
	}
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		p.fetch(fmt.Sprintf("profile?seconds=%d", seconds), name+".cpu.pprof", time.Duration(seconds+30)*time.Second)
	}()
}

// wait returns when the CPU profile in flight is written.
func (p *profiler) wait() {
	if p.done != nil {
		<-p.done
		p.done = nil
	}
}

// heap writes the live heap to <dir>/<name>.heap.pprof.
func (p *profiler) heap(name string) {
	if p.dir != "" {
		p.fetch("heap?gc=1", name+".heap.pprof", 30*time.Second)
	}
}

func (p *profiler) fetch(query, file string, timeout time.Duration) {
	c := &http.Client{Timeout: timeout}
	resp, err := c.Get("http://" + p.addr + "/debug/pprof/" + query)
	if err != nil {
		fmt.Printf("profile %s: %v\n", file, err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	f, err := os.Create(filepath.Join(p.dir, file))
	if err != nil {
		fmt.Printf("profile %s: %v\n", file, err)
		return
	}
	defer func() { _ = f.Close() }()
	if _, err := io.Copy(f, resp.Body); err != nil {
		fmt.Printf("profile %s: %v\n", file, err)
		return
	}
	fmt.Printf("profile written to %s (go tool pprof -top %s)\n", f.Name(), f.Name())
}

// spokeCPU starts a CPU profile of a spoke's API server for the next seconds, written to
// <dir>/<name>.cpu.pprof: what the spoke spends its time on while Flotilla (or the direct
// client) writes to it. It returns a function that waits for the profile.
func (p *profiler) spokeCPU(ctx context.Context, spoke kubernetes.Interface, name string, seconds int) (wait func()) {
	if p.dir == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		data, err := spoke.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
		if err != nil {
			fmt.Printf("profile %s: %v\n", name, err)
			return
		}
		path := filepath.Join(p.dir, name+".cpu.pprof")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			fmt.Printf("profile %s: %v\n", name, err)
			return
		}
		fmt.Printf("profile written to %s (go tool pprof -top %s)\n", path, path)
	}()
	return func() { <-done }
}
