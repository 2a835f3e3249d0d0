package localfleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// stopGrace is how long a component gets to exit after SIGTERM before it is killed. Stopping
// happens in three waves (controllers, API server, etcd), so a plane is down within 3×stopGrace
// even when nothing exits on its own.
const stopGrace = 3 * time.Second

// planePorts are chosen once and kept for the plane's life, so kubeconfigs stay valid across a
// stop and start.
type planePorts struct {
	etcdClient, etcdPeer, apiServer int
}

// Plane is one Kubernetes control plane of a fleet: its processes, directory and identity.
type Plane struct {
	spec    PlaneSpec
	network serviceNetwork
	dir     string
	binDir  string
	pki     pki
	ports   planePorts

	mu    sync.Mutex
	procs []*process // running components, in start order
	// clean is what etcd held when the plane was marked clean (reset.go).
	clean     map[string][]byte
	auditFrom atomic.Int64 // where AuditEvents starts reading the audit log
}

func newPlane(spec PlaneSpec, network serviceNetwork, dir, binDir string) (*Plane, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	p := &Plane{
		spec:    spec,
		network: network,
		dir:     dir,
		binDir:  binDir,
		pki:     pki{dir: filepath.Join(dir, "pki"), serviceIP: network.apiServerIP},
		ports:   planePorts{etcdClient: ports[0], etcdPeer: ports[1], apiServer: ports[2]},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := p.pki.ensure(); err != nil {
		return nil, fmt.Errorf("plane %s: certificates: %w", spec.Name, err)
	}
	if err := p.writeKubeconfig(p.KubeconfigPath()); err != nil {
		return nil, fmt.Errorf("plane %s: kubeconfig: %w", spec.Name, err)
	}
	if spec.Role == RoleSpoke && spec.Mode == ModeFull {
		if err := p.writeKwokConfig(); err != nil {
			return nil, fmt.Errorf("plane %s: %w", spec.Name, err)
		}
	}
	if err := os.WriteFile(p.auditPolicyPath(), []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// Name returns the plane's name.
func (p *Plane) Name() string { return p.spec.Name }

// Spec returns the plane's spec with defaults filled in.
func (p *Plane) Spec() PlaneSpec { return p.spec }

// Dir returns the plane's private directory: data, certificates, logs and PID files.
func (p *Plane) Dir() string { return p.dir }

// Server returns the API server URL.
func (p *Plane) Server() string { return fmt.Sprintf("https://127.0.0.1:%d", p.ports.apiServer) }

// KubeconfigPath returns the path of the plane's admin kubeconfig.
func (p *Plane) KubeconfigPath() string { return filepath.Join(p.dir, "admin.kubeconfig") }

// RESTConfig returns an admin client configuration for the plane.
func (p *Plane) RESTConfig() *rest.Config {
	return &rest.Config{
		Host: p.Server(),
		TLSClientConfig: rest.TLSClientConfig{
			CAFile:   p.pki.path(caCertFile),
			CertFile: p.pki.path(adminCertFile),
			KeyFile:  p.pki.path(adminKeyFile),
		},
		QPS:   -1, // no client-side throttling against a local test plane
		Burst: -1,
	}
}

// PIDs returns the operating-system process IDs of the running components by name.
func (p *Plane) PIDs() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	pids := make(map[string]int, len(p.procs))
	for _, proc := range p.procs {
		if !proc.exited() {
			pids[proc.name] = proc.PID()
		}
	}
	return pids
}

// Running reports whether the plane's components are started.
func (p *Plane) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.procs) > 0
}

// Start starts every component of the plane and waits until the API server is ready and, on a
// full spoke, the fake Nodes are Ready. Data from an earlier run of the plane is kept. On
// failure everything started is stopped again and the error carries the tail of the log of the
// component that failed.
func (p *Plane) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.procs) > 0 {
		return fmt.Errorf("plane %s is already running", p.spec.Name)
	}
	err := p.startLocked(ctx)
	if err != nil {
		p.stopLocked()
		return fmt.Errorf("plane %s: %w", p.spec.Name, err)
	}
	return nil
}

func (p *Plane) startLocked(ctx context.Context) error {
	comps := p.components()
	// etcd and the API server start together: the API server retries etcd until it answers.
	for _, c := range comps[:2] {
		if err := p.launch(c); err != nil {
			return err
		}
	}
	if err := p.waitAPIServerReady(ctx); err != nil {
		return err
	}
	for _, c := range comps[2:] {
		if err := p.launch(c); err != nil {
			return err
		}
	}
	if p.spec.Role == RoleSpoke && p.spec.Mode == ModeFull {
		return p.prepareWorkloads(ctx)
	}
	return nil
}

func (p *Plane) launch(c component) error {
	proc, err := startProcess(p.dir, c.name, filepath.Join(p.binDir, c.bin), c.args)
	if err != nil {
		return err
	}
	p.procs = append(p.procs, proc)
	return nil
}

// Stop stops every component, newest first, and keeps the plane's data: Start brings it back
// as it was. Stopping a stopped plane does nothing.
func (p *Plane) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

func (p *Plane) stopLocked() {
	// Controllers first, all at once: they only talk to the API server.
	var wg sync.WaitGroup
	for i := len(p.procs) - 1; i >= 2; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.procs[i].stop(stopGrace)
		}()
	}
	wg.Wait()
	// Then the API server, then etcd under it.
	for i := min(len(p.procs), 2) - 1; i >= 0; i-- {
		p.procs[i].stop(stopGrace)
	}
	p.procs = nil
}

// RestartAPIServer stops the API server alone and starts it again, leaving etcd and the
// controllers running, and waits until it is ready.
func (p *Plane) RestartAPIServer(ctx context.Context) error {
	return p.restartComponent(ctx, p.apiServer())
}

// RestartEtcd stops the plane's etcd alone (SIGTERM, then SIGKILL after stopGrace) and starts
// it again on the same data and ports, leaving the API server and the controllers running, and
// waits until the API server is ready again: its readiness includes reaching etcd. The chaos
// soak uses it to cut a spoke's storage from under its API server.
func (p *Plane) RestartEtcd(ctx context.Context) error {
	return p.restartComponent(ctx, p.etcd())
}

// restartComponent stops one running component, starts it again with the same command line,
// and waits until the API server is ready.
func (p *Plane) restartComponent(ctx context.Context, c component) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	idx := -1
	for i, proc := range p.procs {
		if proc.name == c.name {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("plane %s: %s is not running", p.spec.Name, c.name)
	}
	// A kube-apiserver restarted, or cut from its etcd, on a loaded machine can lose its own
	// post-start hooks for good (rbac/bootstrap-roles: "connection refused" to itself) and
	// never turn ready: the API server is restarted once more before it counts as a failure
	// (whichever component was restarted first: etcd restarted again would not mend it).
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if attempt == 1 {
			c = p.apiServer()
			for i, proc := range p.procs {
				if proc.name == c.name {
					idx = i
				}
			}
		}
		p.procs[idx].stop(stopGrace)
		proc, startErr := startProcess(p.dir, c.name, filepath.Join(p.binDir, c.bin), c.args)
		if startErr != nil {
			return startErr
		}
		p.procs[idx] = proc
		if err = p.waitAPIServerReady(ctx); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("plane %s: restart %s: %w", p.spec.Name, c.name, err)
	}
	return nil
}

// exitedComponent returns an error for the first component that is no longer running.
func (p *Plane) exitedComponent() error {
	for _, proc := range p.procs {
		if proc.exited() {
			return proc.exitError()
		}
	}
	return nil
}

// errNotReady marks a readiness check that has not passed yet.
var errNotReady = errors.New("not ready")
