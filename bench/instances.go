package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

const (
	// readyInstances are created, one at a time, in each phase of instance_ready.
	readyInstances = 50
	// readySpokes is how many spokes the fleet API is served on.
	readySpokes = 3
	// instanceTimeout bounds the wait for one instance to turn ACTIVE.
	instanceTimeout = 2 * time.Minute
	// setupTimeout bounds the wait for an API to be served.
	setupTimeout = 3 * time.Minute

	appsNS   = "bench-apps"        // Flotilla's instances, on every spoke of the API
	directNS = "bench-apps-direct" // kro's instances, on the first spoke
)

// rgdTemplate is the benchmark's fleet API, named and kinded by its two uses: a ConfigMap and a
// Service, ready when the Service has its cluster IP, which the instance's status shows. The
// API-only spokes run no controllers, so a Deployment would never become available there; the
// API server itself allocates a Service's cluster IP.
const rgdTemplate = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: %s
spec:
  schema:
    apiVersion: v1alpha1
    kind: %s
    spec:
      message: string | default="hello"
      port: integer | default=8080
    status:
      clusterIP: ${service.spec.clusterIP}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}
      data:
        message: ${schema.spec.message}
  - id: service
    readyWhen:
    - ${service.spec.clusterIP != ""}
    template:
      apiVersion: v1
      kind: Service
      metadata:
        name: ${schema.metadata.name}
      spec:
        selector:
          app.kubernetes.io/name: ${schema.metadata.name}
        ports:
        - port: 80
          targetPort: ${schema.spec.port}
`

// fleetAPI is one use of the benchmark's RGD: Flotilla's on the hub, or kro's on a spoke.
type fleetAPI struct {
	rgd, kind string
}

var (
	flotillaAPI = fleetAPI{rgd: "benchapp.kro.run", kind: "BenchApp"}
	// kroAPI has a kind of its own: the spoke kro runs on also serves Flotilla's, whose CRD kro
	// would rightly refuse to take over.
	kroAPI = fleetAPI{rgd: "benchappdirect.kro.run", kind: "BenchAppDirect"}
)

func (a fleetAPI) manifest() string { return fmt.Sprintf(rgdTemplate, a.rgd, a.kind) }

func (a fleetAPI) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: strings.ToLower(a.kind) + "s"}
}

func (a fleetAPI) instance(namespace, name string) string {
	return fmt.Sprintf("apiVersion: kro.run/v1alpha1\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  message: %s\n",
		a.kind, name, namespace, name)
}

// instanceReady: from `kubectl create` of an instance of a fleet API on a spoke to its
// status.state ACTIVE, readyInstances instances over readySpokes spokes, created one at a time
// with the real kubectl and each awaited; against kro's own controller, built from the kro
// module Flotilla uses, running against the first of those spokes with the same RGD applied
// there directly and as many instances created there the same way.
func (b *bench) instanceReady(ctx context.Context, r *report) error {
	planes := b.pushSpokes()[:min(readySpokes, b.p.Spokes)]
	flot, flotKubectl, err := b.flotillaInstances(ctx, planes)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("kubectl create → status.state %s, %d instances one at a time over %d spokes (kubectl's part, until the instance existed: p50 %.0f ms)",
		stateActive, readyInstances, len(planes), percentile(flotKubectl, 0.5))
	base, baseNote := b.kroInstances(ctx, planes[0])
	var p50, p99 *float64
	if base != nil {
		p50, p99 = f(percentile(base, 0.5)), f(percentile(base, 0.99))
	}
	r.add("instance_ready_p50", "ms", f(percentile(flot, 0.5)), p50, note)
	r.add("instance_ready_p99", "ms", f(percentile(flot, 0.99)), p99, baseNote)
	return nil
}

// flotillaInstances serves the RGD on the spokes with an APIPropagation and times instances
// created round-robin on them.
func (b *bench) flotillaInstances(ctx context.Context, planes []*localfleet.Plane) (ready, kubectl []time.Duration, err error) {
	names := make([]string, len(planes))
	for i, p := range planes {
		names[i] = p.Name()
	}
	rgd, err := objectOf(flotillaAPI.manifest())
	if err != nil {
		return nil, nil, err
	}
	for _, obj := range []client.Object{
		rgd,
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "bench-apis", Namespace: membership.Namespace},
			Spec: flotillav1.PlacementSpec{ClusterNames: names}},
		&flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "bench-apis"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{flotillaAPI.rgd}},
			PlacementRef:             flotillav1.PlacementRef{Name: "bench-apis", Namespace: membership.Namespace}}},
	} {
		if err := b.hub.Create(ctx, obj); err != nil {
			return nil, nil, err
		}
	}
	fmt.Printf("serving %s on %s...\n", flotillaAPI.kind, strings.Join(names, ", "))
	if err := pollUntil(ctx, "APIPropagation bench-apis serving on every spoke", func(ctx context.Context) (bool, error) {
		p := &flotillav1.APIPropagation{}
		if err := b.hub.Get(ctx, client.ObjectKey{Name: "bench-apis"}, p); err != nil {
			return false, err
		}
		return int(p.Status.ServingClusters) == len(planes), nil
	}); err != nil {
		return nil, nil, err
	}
	return b.timeInstances(ctx, flotillaAPI, planes, appsNS)
}

// kroInstances runs kro's controller against one spoke and times instances there; without
// figures, it says why.
func (b *bench) kroInstances(ctx context.Context, plane *localfleet.Plane) (ready []time.Duration, note string) {
	kro, err := localfleet.FindKro(ctx)
	if err != nil {
		return nil, "no baseline: " + err.Error()
	}
	fmt.Printf("building kro's controller from %s@%s...\n", localfleet.KroModule, kro.Version)
	bin, err := kro.BuildController(ctx, b.dir)
	if err != nil {
		return nil, "no baseline: kro's controller could not be built: " + err.Error()
	}
	kc := plane.KubeconfigPath()
	if err := b.kubectl(ctx, kc, "", "apply", "--server-side", "-f", kro.CRDDir()); err != nil {
		return nil, "no baseline: kro's CRDs: " + err.Error()
	}
	if err := b.kubectl(ctx, kc, "", "wait", "--for=condition=Established", "--timeout=60s", "-f", kro.CRDDir()); err != nil {
		return nil, "no baseline: kro's CRDs: " + err.Error()
	}
	ctrl, err := localfleet.StartKroController(b.dir, bin, kc)
	if err != nil {
		return nil, "no baseline: " + err.Error()
	}
	defer ctrl.Stop() // by its PID, on every path
	fail := func(what string, err error) ([]time.Duration, string) {
		fmt.Printf("kro's controller log (tail):\n%s\n", ctrl.LogTail(20))
		return nil, fmt.Sprintf("no baseline: kro's controller %s: %v", what, err)
	}
	fmt.Printf("serving %s with kro's controller on %s (pid %d)...\n", kroAPI.kind, plane.Name(), ctrl.PID())
	if err := b.kubectl(ctx, kc, kroAPI.manifest(), "create", "-f", "-"); err != nil {
		return fail("RGD", err)
	}
	dc, err := dynamic.NewForConfig(plane.RESTConfig())
	if err != nil {
		return fail("RGD", err)
	}
	rgds := dc.Resource(schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "resourcegraphdefinitions"})
	if err := pollUntil(ctx, "kro's RGD Active", func(ctx context.Context) (bool, error) {
		u, err := rgds.Get(ctx, kroAPI.rgd, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		return state == "Active", nil
	}); err != nil {
		return fail("never served the RGD", err)
	}
	ready, kubectl, err := b.timeInstances(ctx, kroAPI, []*localfleet.Plane{plane}, directNS)
	if err != nil {
		return fail("instances", err)
	}
	return ready, fmt.Sprintf("baseline: kro %s's own controller (built from its module with Flotilla's go.mod, its chart's defaults) on %s, the same RGD applied there, %d instances (kubectl's part p50 %.0f ms)",
		kro.Version, plane.Name(), readyInstances, percentile(kubectl, 0.5))
}

// timeInstances creates readyInstances instances of an API round-robin on some spokes with
// kubectl, one at a time, and returns for each the time from kubectl's start to ACTIVE and to
// the instance's first sight. One instance per spoke is created and awaited first, untimed,
// so that neither kubectl's discovery cache nor a controller's first watch of the kind counts.
func (b *bench) timeInstances(ctx context.Context, api fleetAPI, planes []*localfleet.Plane, namespace string) (ready, kubectl []time.Duration, err error) {
	cfgs := make([]*rest.Config, len(planes))
	for i, p := range planes {
		cfgs[i] = p.RESTConfig()
		cs, err := kubernetes.NewForConfig(cfgs[i])
		if err != nil {
			return nil, nil, err
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	w, err := watchReadiness(ctx, cfgs, api.gvr(), namespace)
	if err != nil {
		return nil, nil, err
	}
	defer w.stop()
	create := func(name string, plane *localfleet.Plane) (ready, kubectl time.Duration, err error) {
		start := time.Now()
		if err := b.kubectl(ctx, plane.KubeconfigPath(), api.instance(namespace, name), "create", "-f", "-"); err != nil {
			return 0, 0, err
		}
		seen, active, err := w.wait(name, instanceTimeout)
		if err != nil {
			return 0, 0, err
		}
		return active.Sub(start), seen.Sub(start), nil
	}
	for i, p := range planes {
		if _, _, err := create(fmt.Sprintf("warm-%d", i), p); err != nil {
			return nil, nil, fmt.Errorf("warm-up on %s: %w", p.Name(), err)
		}
	}
	fmt.Printf("creating %d %s instances with kubectl...\n", readyInstances, api.kind)
	for i := range readyInstances {
		plane := planes[i%len(planes)]
		r, k, err := create(fmt.Sprintf("app-%02d", i), plane)
		if err != nil {
			return nil, nil, fmt.Errorf("on %s: %w", plane.Name(), err)
		}
		ready, kubectl = append(ready, r), append(kubectl, k)
		time.Sleep(100 * time.Millisecond) // instances are spaced, as people create them
	}
	return ready, kubectl, nil
}

// kubectl runs the real kubectl against a cluster, with stdin when it is not empty and a
// discovery cache of the benchmark's own.
func (b *bench) kubectl(ctx context.Context, kubeconfig, stdin string, args ...string) error {
	args = append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(b.dir, "kubectl-cache")}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(b.binDir, "kubectl"), args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.Env = append(os.Environ(), "KUBERC=off") // no user preferences
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %v: %s", strings.Join(args[4:], " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// objectOf decodes one YAML manifest.
func objectOf(manifest string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		return nil, err
	}
	return u, nil
}

// pollUntil checks a setup condition every 200 ms until it holds, for at most setupTimeout;
// errors count as not yet.
func pollUntil(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, setupTimeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not after %s (last error: %v)", what, setupTimeout, last)
	}
	return nil
}
