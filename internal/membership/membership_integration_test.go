package membership_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

func TestJoinAndUnjoin(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("spoke-a"))
	ctx := context.Background()
	hubClient := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokeCfg := fleet.Plane("spoke-a").RESTConfig()
	spoke, err := client.New(spokeCfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	join := func(name string) error {
		return membership.Join(ctx, hubClient, membership.JoinOptions{Name: name, Spoke: spokeCfg, Labels: map[string]string{"region": "eu-west"}})
	}
	waitReady := func(status metav1.ConditionStatus, reason string) {
		t.Helper()
		fleettest.Eventually(t, 20*time.Second, fmt.Sprintf("eu-1 Ready=%s/%s", status, reason), func() error {
			c := &flotillav1.Cluster{}
			if err := hubClient.Get(ctx, client.ObjectKey{Name: "eu-1"}, c); err != nil {
				return err
			}
			cond := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady)
			if cond == nil || cond.Status != status || cond.Reason != reason {
				return fmt.Errorf("Ready condition: %+v", cond)
			}
			return nil
		})
	}

	if err := join("eu-1"); err != nil {
		t.Fatal(err)
	}
	waitReady(metav1.ConditionTrue, flotillav1.ReasonProbed)

	t.Run("the stored kubeconfig carries a ServiceAccount token, not the user's certificate", func(t *testing.T) {
		secret := &corev1.Secret{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.SecretName("eu-1")}, secret); err != nil {
			t.Fatal(err)
		}
		kc := string(secret.Data["kubeconfig"])
		if !strings.Contains(kc, "token:") || strings.Contains(kc, "client-certificate-data") || strings.Contains(kc, "client-key-data") {
			t.Fatalf("stored kubeconfig is not token-only:\n%s", redact(kc))
		}
		c := &flotillav1.Cluster{}
		if err := hubClient.Get(ctx, client.ObjectKey{Name: "eu-1"}, c); err != nil {
			t.Fatal(err)
		}
		if c.Labels["region"] != "eu-west" || c.Labels[flotillav1.LabelClusterID] == "" {
			t.Fatalf("cluster labels = %v", c.Labels)
		}
	})

	t.Run("joining again under the same name is idempotent", func(t *testing.T) {
		if err := join("eu-1"); err != nil {
			t.Fatal(err)
		}
		var list flotillav1.ClusterList
		if err := hubClient.List(ctx, &list); err != nil || len(list.Items) != 1 {
			t.Fatalf("clusters after a second join: %d (%v)", len(list.Items), err)
		}
		waitReady(metav1.ConditionTrue, flotillav1.ReasonProbed)
	})

	t.Run("joining the same API server under a second name is refused", func(t *testing.T) {
		err := join("eu-2")
		if err == nil || !strings.Contains(err.Error(), `already joined as cluster "eu-1"`) {
			t.Fatalf("error = %v", err)
		}
		if err := hubClient.Get(ctx, client.ObjectKey{Name: "eu-2"}, &flotillav1.Cluster{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a refused join left a Cluster behind: %v", err)
		}
	})

	workload := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "workload", Namespace: "default"}}
	if err := spoke.Create(ctx, workload); err != nil {
		t.Fatal(err)
	}

	t.Run("a revoked token turns the cluster Unauthorized, and joining again repairs it", func(t *testing.T) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: membership.ServiceAccount, Namespace: membership.Namespace}}
		if err := spoke.Delete(ctx, sa); err != nil {
			t.Fatal(err)
		}
		waitReady(metav1.ConditionFalse, flotillav1.ReasonUnauthorized)
		if err := join("eu-1"); err != nil {
			t.Fatal(err)
		}
		waitReady(metav1.ConditionTrue, flotillav1.ReasonProbed)
	})

	t.Run("unjoin removes Flotilla's objects and leaves workloads", func(t *testing.T) {
		if err := membership.Unjoin(ctx, hubClient, membership.UnjoinOptions{Name: "eu-1"}); err != nil {
			t.Fatal(err)
		}
		if err := hubClient.Get(ctx, client.ObjectKey{Name: "eu-1"}, &flotillav1.Cluster{}); !apierrors.IsNotFound(err) {
			t.Errorf("Cluster still on the hub: %v", err)
		}
		err := hubClient.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.SecretName("eu-1")}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("credentials Secret still on the hub: %v", err)
		}
		err = spoke.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.ServiceAccount}, &corev1.ServiceAccount{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("ServiceAccount still on the spoke: %v", err)
		}
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(workload), workload); err != nil {
			t.Errorf("workload on the spoke lost: %v", err)
		}
		if err := membership.Unjoin(ctx, hubClient, membership.UnjoinOptions{Name: "eu-1"}); !errors.Is(err, membership.ErrNotJoined) {
			t.Errorf("second unjoin: %v, want ErrNotJoined", err)
		}
	})
}

// redact hides token values so a failing test does not print credentials.
func redact(kubeconfig string) string {
	lines := strings.Split(kubeconfig, "\n")
	for i, l := range lines {
		if strings.Contains(l, "token:") || strings.Contains(l, "-data:") {
			lines[i] = l[:strings.Index(l, ":")+1] + " <redacted>"
		}
	}
	return strings.Join(lines, "\n")
}
