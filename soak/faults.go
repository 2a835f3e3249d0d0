package main

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// restartTimeout bounds a restart of a spoke component, including the API server's readiness
// on a busy machine.
const restartTimeout = 3 * time.Minute

// injector carries out the scheduled faults, one at a time, and counts them.
type injector struct {
	spokes  []*localfleet.Plane
	clients []kubernetes.Interface
	hubs    *hubSet
	start   time.Time

	done    map[faultKind]int
	skipped map[faultKind]int
	// spokeTouches counts the spoke-side edits and deletions made: each asks Flotilla for one
	// correction on one cluster.
	spokeTouches int
}

// run waits for each fault's time and carries it out; it returns at the first fault that
// could not be carried out (a plane that does not come back is a broken run, not a finding).
func (in *injector) run(ctx context.Context, faults []fault) error {
	lastEnd := in.start
	for _, f := range faults {
		// At its scheduled time, and never sooner than minFaultGap after the last one ended.
		at := in.start.Add(f.At)
		if gap := lastEnd.Add(minFaultGap); gap.After(at) {
			at = gap
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(at)):
		}
		began := time.Now()
		fmt.Printf("[%s] fault: %s\n", elapsed(in.start), f)
		note, err := in.inject(ctx, f)
		if err != nil {
			return fmt.Errorf("fault %s at %s: %w", f, elapsed(in.start), err)
		}
		if note != "" {
			fmt.Printf("[%s]   %s (%.1f s)\n", elapsed(in.start), note, time.Since(began).Seconds())
		}
		lastEnd = time.Now()
	}
	return nil
}

func (in *injector) inject(ctx context.Context, f fault) (string, error) {
	spoke := in.spokes[f.Target%len(in.spokes)]
	switch f.Kind {
	case faultFreeze:
		pid, ok := spoke.PIDs()["kube-apiserver"]
		if !ok {
			return "", fmt.Errorf("%s has no running API server", spoke.Name())
		}
		if err := freeze(ctx, pid, f.Hold); err != nil {
			return "", err
		}
		in.done[f.Kind]++
		return fmt.Sprintf("%s's API server (pid %d) continued", spoke.Name(), pid), nil
	case faultRestartAPI, faultRestartEtcd:
		// A restart begun is finished though the faults' time ends meanwhile: a spoke left
		// half restarted is no state to compare, and its end is no failure of the run.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
		defer cancel()
		restart := spoke.RestartAPIServer
		if f.Kind == faultRestartEtcd {
			restart = spoke.RestartEtcd
		}
		if err := restart(rctx); err != nil {
			return "", err
		}
		in.done[f.Kind]++
		return fmt.Sprintf("%s ready again", spoke.Name()), nil
	case faultKillHub:
		pid, err := in.hubs.kill(f.Target)
		if err != nil {
			return "", err
		}
		select {
		case <-ctx.Done():
		case <-time.After(f.Hold):
		}
		if err := in.hubs.start(f.Target); err != nil {
			return "", err
		}
		in.done[f.Kind]++
		return fmt.Sprintf("hub replica %d (pid %d) killed, started again after %s", f.Target, pid, f.Hold.Round(100*time.Millisecond)), nil
	default:
		return in.touch(ctx, f)
	}
}

// freeze stops a process with SIGSTOP for hold, then continues it; it continues it on every
// path, ctx ending included.
func freeze(ctx context.Context, pid int, hold time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP %d: %w", pid, err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	return nil
}

// touch edits or deletes one delivered object on a spoke, as the spoke's admin: a ConfigMap's
// value or a Deployment's image changes, or the object is deleted. Flotilla is to correct it.
func (in *injector) touch(ctx context.Context, f fault) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	spoke := in.spokes[f.Target%len(in.spokes)]
	cs := in.clients[f.Target%len(in.clients)]
	owned := metav1.ListOptions{LabelSelector: flotillav1.LabelOwner}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, owned)
	if err != nil {
		in.skipped[f.Kind]++
		return fmt.Sprintf("skipped: list on %s: %v", spoke.Name(), err), nil
	}
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, owned)
	if err != nil {
		in.skipped[f.Kind]++
		return fmt.Sprintf("skipped: list on %s: %v", spoke.Name(), err), nil
	}
	n := len(cms.Items) + len(deps.Items)
	if n == 0 {
		in.skipped[f.Kind]++
		return "skipped: nothing delivered there yet", nil
	}
	i := f.Pick % n
	var what string
	if i < len(cms.Items) {
		name := cms.Items[i].Name
		what = "configmap " + name
		if f.Kind == faultSpokeDelete {
			err = cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			patch, _ := json.Marshal(map[string]any{"data": map[string]string{"value": "changed-on-" + spoke.Name()}})
			_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
	} else {
		d := deps.Items[i-len(cms.Items)]
		what = "deployment " + d.Name
		if f.Kind == faultSpokeDelete {
			err = cs.AppsV1().Deployments(ns).Delete(ctx, d.Name, metav1.DeleteOptions{})
		} else {
			patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []map[string]string{{"name": "app", "image": "registry.example/soak/changed-on-" + spoke.Name()}}}}}})
			_, err = cs.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		}
	}
	if err != nil {
		in.skipped[f.Kind]++
		return fmt.Sprintf("skipped: %s on %s: %v", what, spoke.Name(), err), nil
	}
	in.done[f.Kind]++
	in.spokeTouches++
	verb := "edited"
	if f.Kind == faultSpokeDelete {
		verb = "deleted"
	}
	return fmt.Sprintf("%s %s on %s", verb, what, spoke.Name()), nil
}
