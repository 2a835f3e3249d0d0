package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

const (
	oneNS     = "bench-one"
	oneBaseNS = "baseline-one"
)

// bulkOne: the bulk scenario on the first spoke alone, while the others idle: the objects of a
// namespace of their own, placed on that spoke by name, against the direct client applying
// them to a fresh namespace of the same spoke. With nothing else to share the machine with,
// this is where a client-side limit would show.
func (b *bench) bulkOne(ctx context.Context, r *report) error {
	spoke, plane := b.spokes[0], b.pushSpokes()[0]
	if err := b.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: oneNS}}); err != nil {
		return err
	}
	if err := b.hub.Create(ctx, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: oneNS},
		Spec: flotillav1.PlacementSpec{ClusterNames: []string{plane.Name()}}}); err != nil {
		return err
	}
	if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: oneBaseNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return err
	}
	fmt.Printf("creating %d ConfigMaps on the hub for %s alone...\n", b.p.Objects, plane.Name())
	if err := applyAll(ctx, hubCS, oneNS, b.p, "v0"); err != nil {
		return err
	}

	a, err := watchArrivals(ctx, b.spokes[:1], oneNS, selector, hasVersion("v0"))
	if err != nil {
		return err
	}
	start, meter := time.Now(), startCPUMeter(b.cpuGroups())
	if err := b.hub.Create(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: oneNS},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "one"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}}}}}}); err != nil {
		return err
	}
	if err := a.wait(b.p.Objects, deliveryTimeout); err != nil {
		return err
	}
	flotilla, flotillaEnd, flotillaCPU := time.Since(start).Seconds(), time.Now(), meter.String()
	firstFlotilla := a.firstArrival().Sub(start).Seconds()
	flotillaLoad, err := measureLoad(b.pushSpokes()[:1], start, flotillaEnd)
	if err != nil {
		return err
	}

	base, err := watchArrivals(ctx, b.spokes[:1], oneBaseNS, selector, hasVersion("v0"))
	if err != nil {
		return err
	}
	start, meter = time.Now(), startCPUMeter(b.cpuGroups())
	if err := applyAll(ctx, spoke, oneBaseNS, b.p, "v0"); err != nil {
		return err
	}
	if err := base.wait(b.p.Objects, deliveryTimeout); err != nil {
		return err
	}
	direct, directCPU := time.Since(start).Seconds(), meter.String()
	directLoad, err := measureLoad(b.pushSpokes()[:1], start, time.Now())
	if err != nil {
		return err
	}
	r.add("bulk_one", "s", f(flotilla), f(direct), fmt.Sprintf("1 spoke (the others idle); first object after %.2f s; %s (direct: first after %.2f s; %s)",
		firstFlotilla, flotillaCPU, base.firstArrival().Sub(start).Seconds(), directCPU))
	r.addLoad("bulk_one", flotillaLoad, directLoad)
	return nil
}
