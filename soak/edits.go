package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// editStream writes the continuous stream of hub changes and keeps the record the checks
// need: the model of what it wrote, when the hub wanted each object, and counts.
type editStream struct {
	hub    client.Client
	hubCS  kubernetes.Interface
	spokes int
	rng    *rand.Rand
	every  time.Duration
	start  time.Time

	// instances are the spokes' SoakApp clients (empty: no fleet API changes), spokeNames
	// their names.
	instances  []dynamic.NamespaceableResourceInterface
	spokeNames []string

	mu          sync.Mutex
	instExists  map[[2]string]bool // by spoke and name, what the spokes last answered
	instChanges map[string]int     // by "verb SoakApp"
	instSkipped int                // instance changes a frozen or restarting spoke did not take
	model       *model
	history     *wantHistory
	changes     map[string]int // by "verb Kind"
	skipped     int            // changes the hub refused as not yet possible (an owner still being deleted)
	last        time.Time      // when the hub answered the last change
	errors      []string
}

func newEditStream(hub client.Client, hubCS kubernetes.Interface, spokes int, seed uint64, every time.Duration, start time.Time) *editStream {
	return &editStream{hub: hub, hubCS: hubCS, spokes: spokes, rng: rand.New(rand.NewPCG(seed, 0xed17)), every: every, start: start,
		model: newModel(), history: newWantHistory(), changes: map[string]int{}, instExists: map[[2]string]bool{}, instChanges: map[string]int{}}
}

// instanceTotal is how many fleet API instance changes were written.
func (e *editStream) instanceTotal() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.instChanges {
		n += c
	}
	return n
}

// run writes a change every e.every (0.5 to 1.5 times it, drawn from the seed) until ctx ends.
func (e *editStream) run(ctx context.Context) {
	for {
		wait := time.Duration(float64(e.every) * (0.5 + e.rng.Float64()))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		e.mu.Lock()
		if len(e.instances) > 0 && e.rng.IntN(100) < instanceShare {
			op := e.nextInstance(e.instExists, e.spokeNames)
			e.mu.Unlock()
			e.writeInstance(ctx, op)
			continue
		}
		op := e.model.next(e.rng, e.spokes)
		e.mu.Unlock()
		e.write(ctx, op)
	}
}

// write sends one change to the hub and records it once the hub has taken it.
func (e *editStream) write(ctx context.Context, op editOp) {
	e.mu.Lock()
	before := e.model.wanted()
	e.mu.Unlock()
	sent := time.Now()
	err := e.send(ctx, op)
	answered := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err == nil:
		e.model.apply(op)
		e.history.record(before, e.model.wanted(), sent, answered)
		e.changes[op.Verb+" "+op.Kind]++
		e.last = answered
	case apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err):
		e.skipped++ // e.g. a Propagation created again while Flotilla still cleans up the last one
	case ctx.Err() == nil:
		e.errors = append(e.errors, fmt.Sprintf("%s: %v", op, err))
		fmt.Printf("[%s] hub edit failed: %s: %v\n", elapsed(e.start), op, err)
	}
}

func (e *editStream) send(ctx context.Context, op editOp) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch op.Kind + " " + op.Verb {
	case "Propagation create":
		return e.hub.Create(ctx, propagation(op.Name))
	case "Propagation delete":
		return e.hub.Delete(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: op.Name, Namespace: ns}})
	case "ConfigMap create":
		_, err := e.hubCS.CoreV1().ConfigMaps(ns).Create(ctx, configMap(op.Name, op.CM), metav1.CreateOptions{})
		return err
	case "ConfigMap update":
		return e.apply(ctx, "configmaps", op.Name, configMap(op.Name, op.CM))
	case "ConfigMap delete":
		return e.hubCS.CoreV1().ConfigMaps(ns).Delete(ctx, op.Name, metav1.DeleteOptions{})
	case "Deployment create":
		_, err := e.hubCS.AppsV1().Deployments(ns).Create(ctx, deployment(op.Name, op.Dep), metav1.CreateOptions{})
		return err
	case "Deployment update":
		return e.apply(ctx, "deployments", op.Name, deployment(op.Name, op.Dep))
	case "Deployment delete":
		return e.hubCS.AppsV1().Deployments(ns).Delete(ctx, op.Name, metav1.DeleteOptions{})
	}
	return fmt.Errorf("unknown change %s", op)
}

// apply server-side applies an object the soak created, as the soak's field manager.
func (e *editStream) apply(ctx context.Context, resource, name string, obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: userAgent, Force: ptr.To(true)}
	if resource == "configmaps" {
		_, err = e.hubCS.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.ApplyPatchType, data, opts)
	} else {
		_, err = e.hubCS.AppsV1().Deployments(ns).Patch(ctx, name, types.ApplyPatchType, data, opts)
	}
	return err
}

// lastChange is when the hub answered the last change.
func (e *editStream) lastChange() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last
}

// totalChanges is how many hub changes were written.
func (e *editStream) totalChanges() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.changes {
		n += c
	}
	return n
}

// propagation delivers the ConfigMaps labelled propLabel=name to every spoke. Its prune
// budget is 100%: the soak's deletes are one object at a time, and each Propagation keeps its
// anchor, so none waits for a confirmation.
func propagation(name string) *flotillav1.Propagation {
	return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: allPlacement},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{propLabel: name}}}},
			Strategy: flotillav1.PropagationStrategy{PruneBudgetPercent: ptr.To[int32](100)}}}
}

func configMap(name string, cm hubCM) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{propLabel: cm.Prop}},
		Data:       map[string]string{"value": cm.Value}}
}

// deployment is a transparent-mode Deployment divided over the spokes by divPlacement.
func deployment(name string, d hubDep) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{flotillav1.LabelPlacement: divPlacement, "app": name}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(d.Replicas), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: d.Image}}}}}}
}

// elapsed formats the time since start as m:ss.
func elapsed(start time.Time) string {
	d := time.Since(start).Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
