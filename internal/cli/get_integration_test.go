package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestGetAndStatusOnHub runs `flotilla get clusters` and `status` against a real hub: named
// clusters and a missing one, and a watch, from the list's resourceVersion, that prints each
// change of the clusters its selector chooses until interrupted; then a Propagation looked for
// in the default namespace that is in another.
func TestGetAndStatusOnHub(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub())
	hub := hubtest.Install(t, fleet)
	ctx := context.Background()
	create := func(obj client.Object) {
		t.Helper()
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
	cluster := func(name, region string) *flotillav1.Cluster {
		return &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"region": region}},
			Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{Namespace: "flotilla-system", Name: name}}}
	}
	create(cluster("eu-1", "eu-west"))
	create(cluster("us-1", "us-east"))
	cli := func(ctx context.Context, out *syncBuffer, args ...string) error {
		cmd := NewRootCommand()
		cmd.SetOut(out)
		cmd.SetErr(out)
		cmd.SetArgs(append(args, "--hub-kubeconfig", fleet.Hub().KubeconfigPath()))
		return cmd.ExecuteContext(ctx)
	}

	var out syncBuffer
	err := cli(ctx, &out, "get", "clusters", "us-1", "nope")
	wantError(t, err, `cluster "nope" not found on the hub`)
	if !strings.Contains(out.String(), "us-1") || strings.Contains(out.String(), "eu-1") {
		t.Errorf("get clusters us-1 nope printed:\n%s", out.String())
	}

	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var watched syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- cli(watchCtx, &watched, "get", "clusters", "--watch", "-l", "region=eu-west", "-o", "name")
	}()
	waitFor(t, &watched, "cluster.flotilla.dev/eu-1\n", 1)
	create(cluster("us-2", "us-east"))
	eu2 := cluster("eu-2", "eu-west")
	create(eu2)
	waitFor(t, &watched, "cluster.flotilla.dev/eu-2\n", 1)
	if err := hub.Delete(ctx, eu2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &watched, "cluster.flotilla.dev/eu-2\n", 2)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the watch ended with %v; want nil when interrupted", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end when interrupted")
	}
	if strings.Contains(watched.String(), "us-") {
		t.Errorf("the watch printed a cluster its selector does not choose:\n%s", watched.String())
	}

	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web-demo"}})
	create(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "web-demo", Name: "web"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "web"}}}})
	err = cli(ctx, &syncBuffer{}, "status", "web")
	want := "propagation web not found in namespace default; it is in namespace web-demo: pass -n web-demo"
	if err == nil || err.Error() != want || !apierrors.IsNotFound(err) {
		t.Errorf("status web: error %v; want %q", err, want)
	}
}
