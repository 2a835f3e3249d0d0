package localfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"
)

// Options describes a fleet to start.
type Options struct {
	// Dir is where every plane keeps its data, certificates, logs and PID files, in Dir/<name>.
	Dir string
	// BinDir holds the Kubernetes binaries; empty means FindBinDir().
	BinDir string
	// Planes lists the hub (at most one) and the spokes.
	Planes []PlaneSpec
	// Parallel is how many planes start at once; 0 means all of them.
	Parallel int
	// Progress receives one line per finished step; nil discards them.
	Progress io.Writer
}

// Fleet is a set of running planes.
type Fleet struct {
	planes []*Plane
}

// Start starts every plane of opts and waits until all are ready. If any plane fails, every
// plane is stopped and the error names what failed with the tail of its log.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	specs, err := validate(opts.Planes)
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("localfleet: Options.Dir is required")
	}
	binDir := opts.BinDir
	if binDir == "" {
		binDir = FindBinDir()
	}
	if err := checkBinaries(binDir, specs); err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	f := &Fleet{}
	networks := serviceNetworks(specs)
	for i, s := range specs {
		p, err := newPlane(s, networks[i], filepath.Join(opts.Dir, s.Name), binDir)
		if err != nil {
			return nil, err
		}
		f.planes = append(f.planes, p)
	}
	if err := f.startAll(ctx, opts.Parallel, progress); err != nil {
		f.Stop()
		return nil, err
	}
	return f, nil
}

func validate(planes []PlaneSpec) ([]PlaneSpec, error) {
	if len(planes) == 0 {
		return nil, errors.New("localfleet: no planes to start")
	}
	names := map[string]bool{}
	hubs := 0
	out := make([]PlaneSpec, 0, len(planes))
	for _, s := range planes {
		s, err := s.withDefaults()
		if err != nil {
			return nil, err
		}
		if names[s.Name] {
			return nil, fmt.Errorf("two planes are named %q", s.Name)
		}
		names[s.Name] = true
		if s.Role == RoleHub {
			hubs++
		}
		out = append(out, s)
	}
	if hubs > 1 {
		return nil, fmt.Errorf("a fleet has at most one hub, got %d", hubs)
	}
	return out, nil
}

func (f *Fleet) startAll(ctx context.Context, parallel int, progress io.Writer) error {
	if parallel <= 0 {
		parallel = len(f.planes)
	}
	sem := make(chan struct{}, parallel)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range f.planes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			err := p.Start(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			_, _ = fmt.Fprintf(progress, "  %-10s %-9s ready in %.1fs at %s\n",
				p.Name(), p.spec.describe(), time.Since(start).Seconds(), p.Server())
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Stop stops every plane, in parallel, and keeps their data.
func (f *Fleet) Stop() {
	var wg sync.WaitGroup
	for _, p := range f.planes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Stop()
		}()
	}
	wg.Wait()
}

// Planes returns every plane, in the order of Options.Planes.
func (f *Fleet) Planes() []*Plane { return f.planes }

// Hub returns the hub plane, or nil if the fleet has none.
func (f *Fleet) Hub() *Plane {
	for _, p := range f.planes {
		if p.spec.Role == RoleHub {
			return p
		}
	}
	return nil
}

// Spokes returns the spoke planes in order.
func (f *Fleet) Spokes() []*Plane {
	var out []*Plane
	for _, p := range f.planes {
		if p.spec.Role == RoleSpoke {
			out = append(out, p)
		}
	}
	return out
}

// Plane returns the plane with this name, or nil.
func (f *Fleet) Plane(name string) *Plane {
	for _, p := range f.planes {
		if p.spec.Name == name {
			return p
		}
	}
	return nil
}
