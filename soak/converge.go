package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// convergePoll is how often the end-of-run comparison is made until it finds no difference.
const convergePoll = time.Second

// readHub reads what the hub says: Clusters, the soak's Placements, Propagations, ConfigMaps
// and Deployments.
func readHub(ctx context.Context, hub client.Client) (hubState, error) {
	var h hubState
	var clusters flotillav1.ClusterList
	var placements flotillav1.PlacementList
	var props flotillav1.PropagationList
	var cms corev1.ConfigMapList
	var deps appsv1.DeploymentList
	for _, l := range []client.ObjectList{&placements, &props, &cms, &deps} {
		if err := hub.List(ctx, l, client.InNamespace(ns)); err != nil {
			return h, fmt.Errorf("hub: list %T: %w", l, err)
		}
	}
	if err := hub.List(ctx, &clusters); err != nil {
		return h, fmt.Errorf("hub: list clusters: %w", err)
	}
	return hubState{Clusters: clusters.Items, Placements: placements.Items, Propagations: props.Items, ConfigMaps: cms.Items, Deployments: deps.Items}, nil
}

// spokeReader reads one spoke: its typed client, and its SoakApp client (nil without fleet APIs).
type spokeReader struct {
	cs        kubernetes.Interface
	instances dynamic.NamespaceableResourceInterface
}

// readSpoke reads Flotilla's objects in the soak's namespaces on one spoke, and the SoakApp
// instances.
func readSpoke(ctx context.Context, r spokeReader) (spokeState, error) {
	owned := metav1.ListOptions{LabelSelector: flotillav1.LabelOwner}
	var s spokeState
	cms, err := r.cs.CoreV1().ConfigMaps(ns).List(ctx, owned)
	if err != nil {
		return s, err
	}
	deps, err := r.cs.AppsV1().Deployments(ns).List(ctx, owned)
	if err != nil {
		return s, err
	}
	s.ConfigMaps, s.Deployments = cms.Items, deps.Items
	if r.instances == nil {
		return s, nil
	}
	insts, err := r.instances.Namespace(appsNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	appCMs, err := r.cs.CoreV1().ConfigMaps(appsNS).List(ctx, owned)
	if err != nil {
		return s, err
	}
	appDeps, err := r.cs.AppsV1().Deployments(appsNS).List(ctx, owned)
	if err != nil {
		return s, err
	}
	s.Instances, s.AppConfigMaps, s.AppDeployments = insts.Items, appCMs.Items, appDeps.Items
	return s, nil
}

// compare reads the hub and every spoke and returns their differences, and how many objects
// the hub wants over all spokes.
func compare(ctx context.Context, hub client.Client, spokes map[string]spokeReader) ([]difference, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, err := readHub(ctx, hub)
	if err != nil {
		return nil, 0, err
	}
	states := map[string]spokeState{}
	for name, sr := range spokes {
		s, err := readSpoke(ctx, sr)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		states[name] = s
	}
	return diffCounted(h, states)
}

// converge compares the hub with the spokes every convergePoll until they agree or timeout
// passes; it returns how long that took and how many objects agreed, or the last differences
// when they never agreed.
func converge(ctx context.Context, hub client.Client, spokes map[string]spokeReader, timeout time.Duration) (time.Duration, int, []difference, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	var last []difference
	var lastErr error
	reported := time.Now()
	for {
		diffs, wanted, err := compare(ctx, hub, spokes)
		if err == nil && len(diffs) == 0 {
			return time.Since(start), wanted, nil, nil
		}
		last, lastErr = diffs, err
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Since(start), 0, last, lastErr
		}
		if time.Since(reported) > 15*time.Second {
			reported = time.Now()
			fmt.Printf("  converging: %d differences after %.0f s (e.g. %s)\n", len(diffs), time.Since(start).Seconds(), firstOf(diffs, err))
		}
		select {
		case <-ctx.Done():
		case <-time.After(convergePoll):
		}
	}
}

func firstOf(diffs []difference, err error) string {
	if err != nil {
		return err.Error()
	}
	if len(diffs) == 0 {
		return "none"
	}
	return diffs[0].String()
}
