package localfleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// A plane marked clean can be reset to that state in place, without restarting its etcd and
// API server: the keys its API server stored since are deleted from etcd, the ones deleted or
// changed are written back, its controllers are restarted, and its audit log is read from the
// reset on. Starting a plane costs about 3 CPU-seconds (an API server's start is mostly building
// its OpenAPI documents); a reset 0.2 to 1 second, so the tests of a package hand a fleet on to the next test that asks for the
// same planes (fleettest). Deleting from etcd skips finalizers and admission, which is the
// point: nothing acts on the objects any more, they are simply gone, and every watcher (the API
// server's caches, the controllers of a full spoke) sees them deleted.

// registryPrefix is where the API server keeps every object.
const registryPrefix = "/registry/"

// rewrittenByComponents are keys a reset leaves as they are when they changed: heartbeats the
// plane's own components renew every few seconds (an older copy written back would only be
// renewed again).
var rewrittenByComponents = []string{"/registry/leases/", "/registry/masterleases/"}

// resetTimeout bounds one reset, the API server's caches catching up included.
const resetTimeout = 30 * time.Second

// MarkClean records the plane's stored objects as they are now, as the state Reset returns
// to, and starts its audit log afresh from here.
func (p *Plane) MarkClean(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	kvs, _, err := p.etcdKV().list(ctx, registryPrefix)
	if err != nil {
		return fmt.Errorf("plane %s: mark clean: %w", p.spec.Name, err)
	}
	p.clean = kvs
	return p.skipAuditLogLocked()
}

// Reset returns the plane's stored objects to what MarkClean recorded, with its controllers
// restarted on them, and waits until the API server's caches have seen it. A plane stopped
// since (a test that took a spoke away) is started again first, on its own data, as Start
// does; one restarted since resets like any other, since etcd kept everything. It refuses a
// plane one of whose components exited by itself: such a plane should be started afresh.
func (p *Plane) Reset(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clean == nil {
		return fmt.Errorf("plane %s: reset: never marked clean", p.spec.Name)
	}
	if len(p.procs) == 0 {
		if err := p.startLocked(ctx); err != nil {
			p.stopLocked()
			return fmt.Errorf("plane %s: reset: start again: %w", p.spec.Name, err)
		}
	}
	if err := p.exitedComponent(); err != nil {
		return fmt.Errorf("plane %s: reset: %w", p.spec.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	if err := p.resetLocked(ctx); err != nil {
		return fmt.Errorf("plane %s: reset: %w", p.spec.Name, err)
	}
	return p.skipAuditLogLocked()
}

// resetLocked stops the plane's controllers, so that none acts on what it still caches while
// the objects are taken away (a ReplicaSet controller that has not yet seen its ReplicaSet go
// makes its Pods again), returns etcd to its clean state, waits for the API server's caches,
// and starts the controllers again on what is left.
func (p *Plane) resetLocked(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, proc := range p.procs[2:] {
		wg.Go(func() { proc.stop(stopGrace) })
	}
	wg.Wait()
	p.procs = p.procs[:2]
	kv := p.etcdKV()
	now, rev, err := kv.list(ctx, registryPrefix)
	if err != nil {
		return err
	}
	del, put := p.changesSinceClean(now)
	if rev, err = kv.apply(ctx, rev, del, put); err != nil {
		return err
	}
	if err := p.waitCachesAt(ctx, rev); err != nil {
		return err
	}
	for _, c := range p.components()[2:] {
		if err := p.launch(c); err != nil {
			return err
		}
	}
	if p.spec.Role == RoleSpoke && p.spec.Mode == ModeFull {
		return p.prepareWorkloads(ctx)
	}
	return nil
}

// changesSinceClean lists the keys stored since the plane was marked clean, and the clean
// values of those deleted or changed since.
func (p *Plane) changesSinceClean(now map[string][]byte) (del []string, put map[string][]byte) {
	put = map[string][]byte{}
	for k := range now {
		if _, ok := p.clean[k]; !ok {
			del = append(del, k)
		}
	}
	for k, v := range p.clean {
		cur, ok := now[k]
		if ok && (bytes.Equal(cur, v) || rewrittenByComponentsKey(k)) {
			continue
		}
		put[k] = v
	}
	return del, put
}

func rewrittenByComponentsKey(k string) bool {
	for _, prefix := range rewrittenByComponents {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// waitCachesAt waits until the API server's caches of Namespaces and CustomResourceDefinitions
// have reached etcd revision rev: a list at least that recent is answered from the cache only
// once it has caught up. Those two decide what a next test may create; every other cache
// catches up from the same watch stream within milliseconds, and reads that must be current
// are consistent reads anyway.
func (p *Plane) waitCachesAt(ctx context.Context, rev int64) error {
	query := "?limit=1&resourceVersionMatch=NotOlderThan&resourceVersion=" + strconv.FormatInt(rev, 10)
	return p.waitGetOK(ctx, "the API server's caches after a reset", resetTimeout, 5*time.Second,
		"/api/v1/namespaces"+query, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"+query)
}

// skipAuditLogLocked makes AuditEvents start from the audit log's current end.
func (p *Plane) skipAuditLogLocked() error {
	if !p.spec.AuditLog {
		return nil
	}
	info, err := os.Stat(p.AuditLogPath())
	if err != nil {
		return fmt.Errorf("plane %s: audit log: %w", p.spec.Name, err)
	}
	p.auditFrom.Store(info.Size())
	return nil
}

func (p *Plane) etcdKV() etcdKV {
	return etcdKV{url: "http://127.0.0.1:" + strconv.Itoa(p.ports.etcdClient), client: &http.Client{Timeout: 10 * time.Second}}
}

// Pause stops the plane's processes where they are (SIGSTOP): a paused plane uses no CPU and
// answers nothing until Resume. Stop works on a paused plane.
func (p *Plane) Pause() error { return p.signalAll(syscall.SIGSTOP) }

// Resume lets a paused plane's processes run again (SIGCONT).
func (p *Plane) Resume() error { return p.signalAll(syscall.SIGCONT) }

func (p *Plane) signalAll(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, proc := range p.procs {
		errs = append(errs, proc.signal(sig))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("plane %s: %w", p.spec.Name, err)
	}
	return nil
}

// Pause pauses every plane (Plane.Pause).
func (f *Fleet) Pause() error {
	return f.eachPlane(context.Background(), func(p *Plane, _ context.Context) error { return p.Pause() })
}

// Resume resumes every plane (Plane.Resume).
func (f *Fleet) Resume() error {
	return f.eachPlane(context.Background(), func(p *Plane, _ context.Context) error { return p.Resume() })
}

// MarkClean marks every plane clean (Plane.MarkClean), in parallel.
func (f *Fleet) MarkClean(ctx context.Context) error {
	return f.eachPlane(ctx, (*Plane).MarkClean)
}

// Reset resets every plane (Plane.Reset), in parallel.
func (f *Fleet) Reset(ctx context.Context) error {
	return f.eachPlane(ctx, (*Plane).Reset)
}

func (f *Fleet) eachPlane(ctx context.Context, do func(*Plane, context.Context) error) error {
	var g errgroup.Group
	for _, p := range f.planes {
		g.Go(func() error { return do(p, ctx) })
	}
	return g.Wait()
}
