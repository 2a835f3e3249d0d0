package main

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// playEvery is how often the stand-in Deployment controller looks at the spokes.
const playEvery = time.Second

// playDeployments stands in for the Deployment controller the API-only spokes lack: every
// playEvery until ctx ends it marks each Deployment in the soak's namespace whose status lags
// its spec as having all its replicas available at its generation. Without it no copy is ever
// Ready, and Flotilla rightly keeps the replicas a cluster is to give up until the clusters
// that gain them are Ready: the division would never settle. A spoke that is frozen or
// restarting is simply tried again next time.
func playDeployments(ctx context.Context, spokes []kubernetes.Interface) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, cs := range spokes {
				playOnce(ctx, cs)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(playEvery):
			}
		}
	}()
	return done
}

func playOnce(ctx context.Context, cs kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, d := range deps.Items {
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == n && d.Status.Replicas == n {
			continue
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
		_, _ = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, &d, metav1.UpdateOptions{}) // a conflict is retried next time
	}
}
