package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// run starts the fleet, soaks it and checks it. It returns a report whenever the soak got as
// far as checking; an error means the run itself broke (a plane that did not come back).
func run(ctx context.Context, p params, binDir string) (*report, error) {
	dir, err := os.MkdirTemp("", "flotilla-soak-")
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if keep {
			fmt.Printf("the fleet's directory (logs, audit logs) is kept: %s\n", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	fleet, err := startFleet(ctx, dir, binDir, p.Spokes)
	if err != nil {
		return nil, err
	}
	defer fleet.Stop()
	hubs := newHubSet(binDir, fleet.Hub().KubeconfigPath(), dir, p.HubReplicas)
	hubs.shard = p.Shard && p.HubReplicas > 1
	defer hubs.stop()
	hub, err := setUpHub(ctx, fleet, hubs)
	if err != nil {
		keep = true
		return nil, err
	}
	hubCS, err := kubernetes.NewForConfig(soakConfig(fleet.Hub()))
	if err != nil {
		return nil, err
	}
	clients, err := spokeClients(fleet)
	if err != nil {
		return nil, err
	}
	var instances []dynamic.NamespaceableResourceInterface
	if !p.NoFleetAPIs {
		if err := setUpAPIs(ctx, hub, fleet.Spokes(), clients); err != nil {
			keep = true
			return nil, err
		}
		if instances, err = instanceClients(fleet.Spokes()); err != nil {
			return nil, err
		}
	}
	r := newReport(p)
	playCtx, stopPlaying := context.WithCancel(ctx)
	played := playDeployments(playCtx, clients)
	defer func() {
		stopPlaying()
		<-played
	}()
	var (
		rssMu   sync.Mutex
		samples []rssSample
	)
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		hubs.sampleRSS(stopSampling, &samples, &rssMu)
	}()
	defer func() {
		select {
		case <-stopSampling:
		default:
			close(stopSampling)
		}
		<-sampled
	}()

	start := time.Now()
	r.Schedule = schedule(p.Seed, p.Duration, p.Spokes, p.HubReplicas)
	fmt.Printf("[0:00] soak starts: %d faults scheduled over %s, a hub change every ~%s\n", len(r.Schedule), p.Duration, p.EditEvery)
	edits := newEditStream(hub, hubCS, p.Spokes, p.Seed, p.EditEvery, start)
	edits.instances = instances
	for _, s := range fleet.Spokes() {
		edits.spokeNames = append(edits.spokeNames, s.Name())
	}
	editCtx, stopEdits := context.WithTimeout(ctx, p.Duration)
	defer stopEdits()
	var editsDone sync.WaitGroup
	editsDone.Add(1)
	go func() {
		defer editsDone.Done()
		edits.run(editCtx)
	}()
	progressDone := progress(editCtx, start, edits)
	in := &injector{spokes: fleet.Spokes(), clients: clients, hubs: hubs, start: start, done: map[faultKind]int{}, skipped: map[faultKind]int{}}
	faultErr := in.run(editCtx, r.Schedule)
	editsDone.Wait()
	<-progressDone
	if faultErr != nil {
		keep = true
		return nil, faultErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.DurationSeconds = time.Since(start).Seconds()
	r.Faults, r.FaultsSkipped, r.SpokeTouches = in.done, in.skipped, in.spokeTouches
	edits.mu.Lock()
	r.HubChangesBy, r.HubEditErrors, r.HubEditsSkipped = edits.changes, edits.errors, edits.skipped
	edits.mu.Unlock()
	r.HubChanges = edits.totalChanges()
	r.InstanceChanges = edits.instanceTotal()
	edits.mu.Lock()
	r.InstanceChangesBy, r.InstanceChangesSkipped = edits.instChanges, edits.instSkipped
	edits.mu.Unlock()
	fmt.Printf("[%s] faults and hub edits stopped (%d hub changes); waiting up to %s for the spokes to converge\n", elapsed(start), r.HubChanges, p.ConvergeTimeout)

	spokes := map[string]spokeReader{}
	for i, s := range fleet.Spokes() {
		spokes[s.Name()] = spokeReader{cs: clients[i]}
		if instances != nil {
			spokes[s.Name()] = spokeReader{cs: clients[i], instances: instances[i]}
		}
	}
	took, agreed, diffs, cerr := converge(ctx, hub, spokes, p.ConvergeTimeout)
	r.Converged, r.ConvergeSeconds, r.ObjectsCompared = cerr == nil && len(diffs) == 0, took.Seconds(), agreed
	c := check{Name: "converged", Pass: r.Converged, Value: took.Seconds(), Bound: fmt.Sprintf("every spoke holds exactly what the hub says within %s", p.ConvergeTimeout)}
	if r.Converged {
		c.Detail = []string{fmt.Sprintf("%d objects over %d spokes as the hub says, %.1f s after the last change", agreed, p.Spokes, time.Since(edits.lastChange()).Seconds())}
	}
	for _, d := range diffs {
		c.Detail = append(c.Detail, d.String())
	}
	if cerr != nil {
		c.Detail = append(c.Detail, "last comparison failed: "+cerr.Error())
	}
	c.Detail = append(c.Detail, histories(fleet.Hub(), fleet.Spokes(), diffs, start)...)
	r.add(c)
	close(stopSampling)
	<-sampled

	if crashed := hubs.exitedUnexpectedly(); len(crashed) > 0 {
		r.add(check{Name: "hub_alive", Pass: false, Value: float64(len(crashed)), Bound: "no hub replica exits unless the soak kills it",
			Detail: []string{fmt.Sprintf("replicas %v exited on their own; see %s", crashed, hubs.logPath(crashed[0]))}})
	}
	if err := r.auditChecks(fleet.Spokes(), start, edits); err != nil {
		keep = true
		return r, err
	}
	r.memoryChecks(samples)
	if len(r.failed()) > 0 {
		keep = true
		r.FleetDir = dir
		for _, c := range r.failed() {
			if c.Name == "converged" || c.Name == "hub_alive" {
				fmt.Printf("flotilla hub log (tail):\n%s\n", tailFile(hubs.logPath(0), 25))
				break
			}
		}
	}
	return r, nil
}

// progress prints a line every 30 s while ctx lasts; the returned channel closes when it ends.
func progress(ctx context.Context, start time.Time, edits *editStream) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Printf("[%s] %d hub changes so far\n", elapsed(start), edits.totalChanges())
			}
		}
	}()
	return done
}

func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
