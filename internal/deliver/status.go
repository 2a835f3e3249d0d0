package deliver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// errStatusTarget refuses a status write to an object that is neither the owner nor one of its
// delivered objects.
var errStatusTarget = errors.New("status may be written only to the owner itself or to an object it delivers")

// writeStatuses writes the statuses a job asks for (Job.Status) and returns the hash of each
// status the cluster now shows, by render.Key, and the failures. A status confirmed by an
// earlier delivery is not looked at again; one not confirmed yet (a new status, or after a
// restart) is read from the API server first and written only when the object does not hold
// it, so a restart costs a read per target and no write.
func (w *clusterWorker) writeStatuses(ctx context.Context, cl cluster.Cluster, job Job, prev *observe.Confirmed) (map[string]string, []error) {
	shown := make(map[string]string, len(job.Status))
	if len(job.Status) == 0 {
		return shown, nil
	}
	var errs []error
	delivered := job.identities()
	for _, target := range job.Status {
		key, ref, hash := render.Key(target), decide.Describe(target), statusHash(target)
		if !isOwnerObject(job.Owner, w.name, target) && !delivered.wants(key) {
			errs = append(errs, fmt.Errorf("status of %s: %w", ref, errStatusTarget))
			continue
		}
		written, known := "", false
		if prev != nil {
			written, known = prev.Status[key]
		}
		if known && written == hash {
			shown[key] = hash
			continue
		}
		// A status Flotilla wrote before and wants otherwise now is written at once: the apply
		// also takes away the fields it no longer sets. One it knows nothing of (a new target,
		// or after a restart) is read first and written only if the object does not hold it.
		if err := w.writeStatus(ctx, cl, confinedTo(job.Owner, job.Strategy), target, !known); err != nil {
			errs = append(errs, fmt.Errorf("status of %s: %w", ref, w.explainForbidden(err)))
			continue
		}
		shown[key] = hash
	}
	return shown, errs
}

// writeStatus applies target's status, as namespace ns's identity if ns is not ""; with check,
// not if the object on the cluster already holds it.
func (w *clusterWorker) writeStatus(ctx context.Context, cl cluster.Cluster, ns string, target *unstructured.Unstructured, check bool) error {
	body := statusBody(target)
	if check {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(target.GroupVersionKind())
		// The target need not be one of Flotilla's objects (an owner on a spoke is created by
		// its users), so the spoke cache, which holds only Flotilla's, is not asked.
		if err := cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(target), live); err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if drift.Compare(map[string]any{"status": body.Object["status"]}, live.Object, nil) == nil {
			return nil
		}
	}
	applier, err := w.applierFor(ctx, cl, ns)
	if err != nil {
		return err
	}
	err = applier.settled(ctx, func() error { return applier.applyStatus(ctx, body) })
	countWrite(w.name, "status", err)
	return err
}

// isOwnerObject reports whether target is the owner object itself, on the owner's cluster.
func isOwnerObject(owner render.Owner, clusterName string, target *unstructured.Unstructured) bool {
	gvk := target.GroupVersionKind()
	kind := gvk.Kind
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	return owner.OnSpoke() && owner.Cluster == clusterName && owner.Kind == kind &&
		owner.Namespace == target.GetNamespace() && owner.Name == target.GetName()
}

// statusBody is the apply configuration of target's status: its identity and status only.
func statusBody(target *unstructured.Unstructured) *unstructured.Unstructured {
	body := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": target.GetAPIVersion(),
		"kind":       target.GetKind(),
		"metadata":   map[string]any{"name": target.GetName()},
	}}
	if ns := target.GetNamespace(); ns != "" {
		body.SetNamespace(ns)
	}
	if status, ok := target.Object["status"]; ok {
		body.Object["status"] = status
	}
	return body
}

// statusHash identifies the status a target should show.
func statusHash(target *unstructured.Unstructured) string {
	raw, _ := json.Marshal(target.Object["status"])
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
