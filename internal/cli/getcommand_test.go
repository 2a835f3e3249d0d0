package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// clusterHub is a fake hub with the clusters eu-1 (region=eu-west) and new (region=us-east).
func clusterHub(funcs interceptor.Funcs) client.WithWatch {
	cs := testClusters(time.Now())
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(&cs[0], &cs[1]).WithInterceptorFuncs(funcs).Build()
}

func TestGetClustersByName(t *testing.T) {
	hub := clusterHub(interceptor.Funcs{})
	out, err := run(t, hub, "get", "clusters", "new")
	if err != nil || !strings.Contains(out, "NAME") || !strings.Contains(out, "new ") || strings.Contains(out, "eu-1") {
		t.Errorf("get clusters new: error %v, output:\n%s", err, out)
	}
	out, err = run(t, hub, "get", "cluster", "new", "eu-1", "-o", "name")
	if err != nil || out != "cluster.flotilla.dev/new\ncluster.flotilla.dev/eu-1\n" {
		t.Errorf("get cluster new eu-1 -o name: error %v, output %q; want both, in the order asked", err, out)
	}
	out, err = run(t, hub, "get", "clusters", "eu-1", "-o", "json")
	if err != nil || !strings.HasPrefix(out, "{\n    \"kind\": \"Cluster\",\n    \"apiVersion\": \"flotilla.dev/v1alpha1\"") {
		t.Errorf("get clusters eu-1 -o json: error %v; want the Cluster alone, got:\n%s", err, out)
	}

	// A missing name: the others are printed, then a not-found error (exit status 1).
	out, err = run(t, hub, "get", "clusters", "eu-1", "spoke-9", "spoke-8")
	wantError(t, err, `clusters "spoke-9", "spoke-8" not found on the hub`)
	if _, usage := err.(UsageError); usage || !strings.Contains(out, "eu-1") {
		t.Errorf("want eu-1 printed and a plain error, got %T, output:\n%s", err, out)
	}
	_, err = run(t, hub, "get", "clusters", "spoke-9")
	wantError(t, err, `cluster "spoke-9" not found on the hub (list them with: flotilla get clusters)`)
}

func TestGetClustersFlags(t *testing.T) {
	hub := clusterHub(interceptor.Funcs{})
	out, err := run(t, hub, "get", "clusters", "-l", "region=eu-west", "-A")
	if err != nil || !strings.Contains(out, "eu-1") || strings.Contains(out, "new") {
		t.Errorf("get clusters -l region=eu-west -A: error %v, output:\n%s", err, out)
	}
	out, err = run(t, hub, "get", "clusters", "--selector", "region notin (eu-west)", "--all-namespaces", "-n", "ignored")
	if err != nil || strings.Contains(out, "eu-1") || !strings.Contains(out, "new") {
		t.Errorf("get clusters --selector 'region notin (eu-west)': error %v, output:\n%s", err, out)
	}
	out, err = run(t, hub, "get", "clusters", "-l", "region=mars")
	if err != nil || out != "No clusters match the selector region=mars.\n" {
		t.Errorf("get clusters -l region=mars: error %v, output %q", err, out)
	}
	out, err = run(t, hub, "get", "clusters", "-l", "region=mars", "-o", "json")
	if err != nil || !strings.Contains(out, `"items": []`) {
		t.Errorf("get clusters -l region=mars -o json: error %v; want an empty List, got %q", err, out)
	}

	_, err = run(t, hub, "get", "clusters", "-l", "region in (eu")
	wantUsage(t, err, `--selector "region in (eu"`)
	_, err = run(t, hub, "get", "clusters", "eu-1", "-l", "region=eu-west")
	wantUsage(t, err, "not both")
	_, err = run(t, hub, "get", "clusters", "-o", "table")
	wantUsage(t, err, `--output "table": want wide, json, yaml, name or jsonpath=TEMPLATE`)
}

func TestGetUnknownResourceTypes(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"clustrs"}, []string{`unknown resource type "clustrs" for "flotilla get"; did you mean "clusters"?`}},
		{[]string{"propagations", "-n", "web-demo"}, []string{
			`"flotilla get" lists only clusters; for propagations on the hub use ` + "`kubectl get propagations -n NAMESPACE` (or -A) for the hub's columns",
			"`flotilla status propagation/NAME -n NAMESPACE`"}},
		{[]string{"fpl"}, []string{"for placements", "`flotilla status placement/NAME -n NAMESPACE`"}},
		{[]string{"deliveries", "-A"}, []string{"`kubectl get deliveries -n NAMESPACE` (or -A) for the hub's columns"}},
		{[]string{"rgd"}, []string{"`kubectl get resourcegraphdefinitions`", "`flotilla status rgd/NAME`"}},
		{[]string{"fapi"}, []string{"`kubectl get apipropagations` for", "`flotilla status apipropagation/NAME`"}},
		{[]string{"deployments"}, []string{`unknown resource type "deployments" for "flotilla get": it lists clusters; list other objects of the hub with kubectl get`}},
		{nil, []string{"flotilla get needs a resource type: flotilla get clusters"}},
	} {
		_, err := run(t, nil, append([]string{"get"}, tt.args...)...)
		wantUsage(t, err, tt.wants...)
		if err != nil && strings.Contains(err.Error(), "kubectl get deliveries") && strings.Contains(err.Error(), "flotilla status") {
			t.Errorf("flotilla status does not explain deliveries: %v", err)
		}
	}
	out, err := run(t, clusterHub(interceptor.Funcs{}), "get", "clusters.flotilla.dev", "eu-1")
	if err != nil || !strings.Contains(out, "eu-1") {
		t.Errorf("get clusters.flotilla.dev eu-1: error %v, output:\n%s", err, out)
	}
}

// TestGetClustersWatch lists, then prints a line per change of a chosen cluster until the
// context ends; a watch whose resourceVersion expired lists again and goes on.
func TestGetClustersWatch(t *testing.T) {
	watchers := make(chan *watch.FakeWatcher, 2)
	var lists int
	hub := clusterHub(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists++
			err := c.List(ctx, list, opts...)
			list.SetResourceVersion("10") // the fake has none; a hub always does
			return err
		},
		Watch: func(_ context.Context, _ client.WithWatch, _ client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			lo := (&client.ListOptions{}).ApplyOptions(opts).AsListOptions()
			if lo.LabelSelector != "region=eu-west" || lo.ResourceVersion == "" {
				t.Errorf("watch with selector %q from resourceVersion %q", lo.LabelSelector, lo.ResourceVersion)
			}
			w := watch.NewFakeWithChanSize(4, false)
			watchers <- w
			return w, nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error)
	go func() { done <- execute(ctx, hub, &out, "get", "clusters", "-w", "-l", "region=eu-west") }()

	w := <-watchers
	waitFor(t, &out, "eu-1", 1)
	eu1 := testClusters(time.Now())[0]
	eu1.ResourceVersion, eu1.Status.NodeCount = "11", 7
	w.Modify(&eu1)
	other := testClusters(time.Now())[1]
	other.ResourceVersion = "12"
	w.Modify(&other) // a hub filters by label; the CLI does too
	waitFor(t, &out, "   7   ", 1)
	w.Error(&apierrors.NewResourceExpired("too old resource version: 10 (12)").ErrStatus)
	<-watchers
	waitFor(t, &out, "eu-1", 3)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch ended with %v; want nil on interrupt", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end with its context")
	}
	if s := out.String(); strings.Contains(s, "new") || strings.Count(s, "NAME") != 1 || lists != 2 {
		t.Errorf("want eu-1 only, one header, two lists (%d); output:\n%s", lists, s)
	}
}

// waitFor waits until out holds want n times.
func waitFor(t *testing.T, out *syncBuffer, want string, n int) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, fmt.Sprintf("output has %q %d times", want, n), func() error {
		if got := strings.Count(out.String(), want); got < n {
			return fmt.Errorf("%d times in:\n%s", got, out.String())
		}
		return nil
	})
}
