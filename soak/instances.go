package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// instanceShare is the percentage of the edit stream's changes that are fleet API instance
// changes on a spoke rather than hub changes.
const instanceShare = 15

// instanceOp is one change of a SoakApp instance on a spoke.
type instanceOp struct {
	Verb     string
	Spoke    int
	Name     string
	Image    string
	Replicas int64
}

// nextInstance draws an instance change from the edit stream's generator; exists says what
// the stream believes of the instances (by spoke and name).
func (e *editStream) nextInstance(exists map[[2]string]bool, spokeNames []string) instanceOp {
	op := instanceOp{Spoke: e.rng.IntN(len(spokeNames)), Name: fmt.Sprintf("app-%d", e.rng.IntN(maxInstances)),
		Image: fmt.Sprintf("registry.example/soak/app:i%d", e.rng.IntN(1000)), Replicas: int64(1 + e.rng.IntN(3))}
	switch {
	case !exists[[2]string{spokeNames[op.Spoke], op.Name}]:
		op.Verb = "create"
	case e.rng.IntN(4) == 0:
		op.Verb = "delete"
	default:
		op.Verb = "update"
	}
	return op
}

// writeInstance sends an instance change to its spoke. A frozen or restarting spoke refuses
// it: it is skipped, as a user would retry later. What the spoke answers keeps the stream's
// belief true; the spoke's audit log, not this belief, is what the delete check reads.
func (e *editStream) writeInstance(ctx context.Context, op instanceOp) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := e.instances[op.Spoke].Namespace(appsNS)
	key := [2]string{e.spokeNames[op.Spoke], op.Name}
	var err error
	switch op.Verb {
	case "create":
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "SoakApp",
			"metadata": map[string]any{"name": op.Name, "namespace": appsNS},
			"spec":     map[string]any{"image": op.Image, "replicas": op.Replicas}}}
		_, err = c.Create(ctx, u, metav1.CreateOptions{})
	case "update":
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"image": op.Image, "replicas": op.Replicas}})
		_, err = c.Patch(ctx, op.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	case "delete":
		err = c.Delete(ctx, op.Name, metav1.DeleteOptions{})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err == nil:
		e.instExists[key] = op.Verb != "delete"
		e.instChanges[op.Verb+" SoakApp"]++
	case apierrors.IsAlreadyExists(err):
		e.instExists[key] = true
		e.skipped++
	case apierrors.IsNotFound(err):
		e.instExists[key] = false
		e.skipped++
	default:
		e.instSkipped++ // the spoke is frozen or restarting
	}
}

// instanceWrite is one of the soak's instance creates or deletes, from a spoke's audit log.
type instanceWrite struct {
	Cluster, Name, Verb string
	Received, Completed time.Time
}

// recordInstances adds to h, from the soak's own instance creates and deletes that the spokes
// answered with success (in the order received), when each instance's children were wanted
// on its cluster: from a create's completion until a delete was received.
func recordInstances(h *wantHistory, writes []instanceWrite) {
	live := map[[2]string]bool{}
	for _, w := range writes {
		k := [2]string{w.Cluster, w.Name}
		children := map[objKey]bool{}
		for _, c := range childKeys(w.Cluster, w.Name) {
			children[c] = true
		}
		switch {
		case w.Verb == "create" && !live[k]:
			live[k] = true
			h.record(map[objKey]bool{}, children, w.Received, w.Completed)
		case w.Verb == "delete" && live[k]:
			live[k] = false
			h.record(children, map[objKey]bool{}, w.Received, w.Completed)
		}
	}
}
