package instances_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A spoke that ran kro before its API was served from the hub: the CRD is there, and so are an
// instance and a child kro applied for it (kro's labels, its ApplySet's mark, no Flotilla
// marker). Once the hub serves the API, the child is taken over as it is (never deleted or
// created again: the spoke's audit log), carries Flotilla's markers, and the instance reaches
// ACTIVE. An object of the same name that is not the instance's (no mark of its ApplySet) is not
// taken: that instance is in ERROR saying so, and the object is left as it was.
func TestInstanceTakenOverFromKro(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.compile(t, "spoke-1", readRGD(t, "testdata/webapp-rgd.yaml"))
	e.installCRD(t, "spoke-1", compiled)
	e.namespace(t, "spoke-1", "team")
	spoke := e.spokes["spoke-1"]

	shop := newInstance(compiled, "team", "shop", map[string]any{"name": "shop"})
	stray := newInstance(compiled, "team", "stray", map[string]any{"name": "stray"})
	configs := map[string]*corev1.ConfigMap{}
	for _, inst := range []*unstructured.Unstructured{shop, stray} {
		if err := spoke.Create(ctx, inst); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{"unrelated": "true"}
		if inst == shop { // what kro put on the child it applied for shop
			labels = map[string]string{kro.ApplySetPartOfLabel: kro.ApplySetID(inst), kro.OwnedLabel: "true", kro.NodeIDLabel: "config",
				kro.InstanceNameLabel: inst.GetName(), kro.InstanceNamespaceLabel: inst.GetNamespace()}
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: inst.GetName() + "-config", Labels: labels},
			Data: map[string]string{"message": "hello"}}
		if err := spoke.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		configs[inst.GetName()] = cm
	}

	e.graphs.Serve("spoke-1", instances.Graph{Compiled: compiled, Revision: compiled.SpecHash()})
	fleettest.Eventually(t, wait, "shop's ConfigMap taken over, its Deployment applied", func() error {
		cm := &corev1.ConfigMap{}
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(configs["shop"]), cm); err != nil {
			return err
		}
		if cm.UID != configs["shop"].UID {
			return fmt.Errorf("the ConfigMap was recreated: uid %s, was %s", cm.UID, configs["shop"].UID)
		}
		if cm.Labels[flotillav1.LabelOwner] == "" {
			return fmt.Errorf("not taken over: labels %v", cm.Labels)
		}
		return spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, &appsv1.Deployment{})
	})
	fleettest.MarkAvailable(t, spoke, client.ObjectKey{Namespace: "team", Name: "shop"})
	fleettest.Eventually(t, wait, "shop ACTIVE", func() error {
		u := newInstance(compiled, "team", "shop", nil)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		return stateIs(u, kro.StateActive)
	})
	fleettest.Eventually(t, wait, "stray in ERROR, naming the conflict", func() error {
		u := newInstance(compiled, "team", "stray", nil)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		if err := stateIs(u, kro.StateError); err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, "not created by Flotilla") {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return nil
	})

	left := &corev1.ConfigMap{}
	if err := spoke.Get(ctx, client.ObjectKeyFromObject(configs["stray"]), left); err != nil {
		t.Fatal(err)
	}
	if left.ResourceVersion != configs["stray"].ResourceVersion {
		t.Errorf("the ConfigMap that is not stray's was changed: %v", left.Labels)
	}
	if w := e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool {
		return ev.ObjectRef.Resource == "configmaps" && (ev.Verb == "delete" || ev.Verb == "create")
	}); len(w) != 0 {
		t.Errorf("ConfigMaps deleted or created instead of taken over: %s", describe(w))
	}
}

// An instance kro made ACTIVE on a spoke stays ACTIVE while Flotilla takes it over: its first
// pass judges kro's children as they are on the spoke (they are not in the spoke cache yet),
// and does not hold ACTIVE for children that taking over changes only the metadata of. Every
// state the instance shows is watched, from before the API is served until Flotilla has taken
// its children over and found it ACTIVE itself.
func TestTakenOverInstanceStaysActive(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.compile(t, "spoke-1", readRGD(t, "testdata/webapp-rgd.yaml"))
	e.installCRD(t, "spoke-1", compiled)
	e.namespace(t, "spoke-1", "team")
	spoke := e.spokes["spoke-1"]
	inst := newInstance(compiled, "team", "shop", map[string]any{"name": "shop"})
	if err := spoke.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	children := playKro(t, spoke, compiled, inst)

	states := watchStates(t, e.fleet.Plane("spoke-1"), inst)
	e.graphs.Serve("spoke-1", instances.Graph{Compiled: compiled, Revision: compiled.SpecHash()})
	kind := compiled.InstanceKind()
	owner := render.Owner{Kind: kind.Kind + "." + kind.Group, Namespace: "team", Name: "shop", Cluster: "spoke-1"}
	fleettest.Eventually(t, wait, "kro's children taken over, the job delivered", func() error {
		for _, c := range children {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(c.GroupVersionKind())
			if err := spoke.Get(ctx, client.ObjectKeyFromObject(c), live); err != nil {
				return err
			}
			if live.GetUID() != c.GetUID() {
				return fmt.Errorf("%s %s recreated", c.GetKind(), c.GetName())
			}
			if live.GetLabels()[flotillav1.LabelOwner] == "" {
				return fmt.Errorf("%s %s not taken over", c.GetKind(), c.GetName())
			}
		}
		if r, ok := e.deliverer.Result(owner, "spoke-1"); !ok || !r.Complete {
			return fmt.Errorf("delivery of %s: %+v (known: %v)", owner, r, ok)
		}
		return nil
	})
	fleettest.Consistently(t, 2*time.Second, "shop ACTIVE", func() error {
		u := newInstance(compiled, "team", "shop", nil)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		return stateIs(u, kro.StateActive)
	})
	if seen := states(); !slices.Equal(seen, []string{kro.StateActive}) {
		t.Errorf("shop showed states %q while taken over, want ACTIVE throughout", seen)
	}
}

// playKro does what kro on the spoke would do for an instance, with the same kro library and
// reading the spoke itself: it writes the instance's metadata, creates the children kro
// resolves (a Deployment becomes available, as its controller would make it), pass after pass
// until kro finds the instance ACTIVE, and writes that status. It returns the children.
func playKro(t *testing.T, spoke client.Client, compiled *kro.Compiled, inst *unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	created := map[string]*unstructured.Unstructured{}
	fleettest.Eventually(t, wait, "kro makes shop ACTIVE", func() error {
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(inst), inst); err != nil {
			return err
		}
		plan, err := kro.Evaluate(ctx, compiled, inst, liveObserver{spoke})
		if err != nil {
			return err
		}
		if plan.Err != nil {
			return plan.Err
		}
		labels, annotations := maps.Clone(inst.GetLabels()), maps.Clone(inst.GetAnnotations())
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(labels, plan.Instance.Labels)
		maps.Copy(annotations, plan.Instance.Annotations)
		if !maps.Equal(labels, inst.GetLabels()) || !maps.Equal(annotations, inst.GetAnnotations()) || len(inst.GetFinalizers()) == 0 {
			inst.SetFinalizers([]string{plan.Instance.Finalizer})
			inst.SetLabels(labels)
			inst.SetAnnotations(annotations)
			if err := spoke.Update(ctx, inst); err != nil {
				return err
			}
			return fmt.Errorf("metadata written before the children")
		}
		for _, c := range plan.Children {
			if c.Live != nil {
				continue
			}
			obj := c.Object.DeepCopy()
			if err := spoke.Create(ctx, obj); err != nil {
				return err
			}
			created[c.NodeID] = obj
			if obj.GetKind() == "Deployment" {
				fleettest.MarkAvailable(t, spoke, client.ObjectKeyFromObject(obj))
			}
		}
		if plan.State != kro.StateActive {
			return fmt.Errorf("state %s", plan.State)
		}
		inst.Object["status"] = plan.Status
		return spoke.Status().Update(ctx, inst)
	})
	if len(created) != 3 {
		t.Fatalf("kro made %d children, want 3", len(created))
	}
	return slices.Collect(maps.Values(created))
}

// liveObserver answers kro's queries from the spoke itself, as kro's own controller does.
type liveObserver struct{ c client.Client }

func (o liveObserver) Observe(q kro.Query) ([]*unstructured.Unstructured, error) {
	if q.Name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(q.Kind)
		err := o.c.Get(context.Background(), client.ObjectKey{Namespace: q.Namespace, Name: q.Name}, u)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return []*unstructured.Unstructured{u}, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(q.Kind.GroupVersion().WithKind(q.Kind.Kind + "List"))
	if err := o.c.List(context.Background(), list, client.InNamespace(q.Namespace), client.MatchingLabelsSelector{Selector: q.Selector}); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// watchStates records every state the instance shows from its current version on (a watch
// sees every write) until the returned stop, which returns them in order, without repeats.
func watchStates(t *testing.T, plane *localfleet.Plane, inst *unstructured.Unstructured) (stop func() []string) {
	t.Helper()
	c, err := client.NewWithWatch(plane.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(inst.GroupVersionKind().GroupVersion().WithKind(inst.GetKind() + "List"))
	w, err := c.Watch(context.Background(), list, client.InNamespace(inst.GetNamespace()),
		client.MatchingFields{"metadata.name": inst.GetName()}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: inst.GetResourceVersion()}})
	if err != nil {
		t.Fatal(err)
	}
	state, _, _ := unstructured.NestedString(inst.Object, "status", "state")
	states := []string{state}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				if s, _, _ := unstructured.NestedString(u.Object, "status", "state"); s != states[len(states)-1] {
					states = append(states, s)
				}
			}
		}
	}()
	t.Cleanup(w.Stop)
	return func() []string {
		select {
		case <-ended:
			t.Error("the watch of the instance ended early: states may be missing")
		default:
		}
		w.Stop()
		<-ended
		return states
	}
}
