package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

const deploySelector = "bench-deploy=yes"

// deployments: the bulk scenario with Deployments, objects with a nested spec, instead of
// ConfigMaps. It runs last: the API-only spokes run no controllers, so the Deployments never
// become available and Flotilla keeps rechecking their readiness.
func (b *bench) deployments(ctx context.Context, r *report) error {
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return err
	}
	fmt.Printf("creating %d Deployments on the hub...\n", b.p.Objects)
	if err := applyDeployments(ctx, hubCS, ns, b.p); err != nil {
		return err
	}
	a, err := watchDeploymentArrivals(ctx, b.spokes, ns, deploySelector)
	if err != nil {
		return err
	}
	start, meter := time.Now(), startCPUMeter(b.cpuGroups())
	if err := b.hub.Create(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "bench-deploy", Namespace: ns},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench-deploy": "yes"}}}}}}); err != nil {
		return err
	}
	if err := a.wait(b.p.Objects, deliveryTimeout); err != nil {
		return err
	}
	flotilla, flotillaCPU := time.Since(start).Seconds(), meter.String()

	base, err := watchDeploymentArrivals(ctx, b.spokes, baseNS, deploySelector)
	if err != nil {
		return err
	}
	start, meter = time.Now(), startCPUMeter(b.cpuGroups())
	if err := b.eachSpoke(func(cs kubernetes.Interface) error { return applyDeployments(ctx, cs, baseNS, b.p) }); err != nil {
		return err
	}
	if err := base.wait(b.p.Objects, deliveryTimeout); err != nil {
		return err
	}
	r.add("bulk_deployments", "s", f(flotilla), f(time.Since(start).Seconds()),
		fmt.Sprintf("%s (direct: %s)", flotillaCPU, meter))
	return nil
}

// deployment is Deployment i of the benchmark.
func deployment(i int) *appsv1.Deployment {
	labels := map[string]string{"app": fmt.Sprintf("dep-%05d", i)}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dep-%05d", i), Labels: map[string]string{"bench-deploy": "yes"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0), // the hub's controllers create no Pods for them
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example/bench/app:v0",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					Env:   []corev1.EnvVar{{Name: "INDEX", Value: fmt.Sprint(i)}},
				}}},
			},
		},
	}
}

// applyDeployments server-side applies the benchmark's Deployments, perSpoke at a time.
func applyDeployments(ctx context.Context, cs kubernetes.Interface, namespace string, p params) error {
	force := true
	return forEachLimited(p.Objects, func(i int) error {
		d := deployment(i)
		data, err := jsonOf(d)
		if err != nil {
			return err
		}
		_, err = cs.AppsV1().Deployments(namespace).Patch(ctx, d.Name, "application/apply-patch+yaml", data,
			metav1.PatchOptions{FieldManager: "bench-baseline", Force: &force})
		return err
	})
}
