package sources_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// profile is a ClusterProfile of another cluster manager, "ocm", in namespace fleet.
func profile(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterManager": map[string]any{"name": "ocm"}}}}
	u.SetGroupVersionKind(sources.ClusterProfileKind)
	u.SetNamespace("fleet")
	u.SetName(name)
	u.SetLabels(map[string]string{sources.LabelClusterManager: "ocm", "tier": "gold"})
	return u
}

// profileStatus is what the cluster manager reports: health, properties, and an access
// provider whose exec plugin Flotilla must never run.
func profileStatus(healthy string) map[string]any {
	return map[string]any{
		"conditions": []any{map[string]any{"type": sources.ConditionControlPlaneHealthy, "status": healthy, "reason": "Reported",
			"message": "", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}},
		"properties": []any{
			map[string]any{"name": "topology.kubernetes.io/region", "value": "eu-west-1"},
			map[string]any{"name": "cloud provider", "value": "not a label"},
		},
		"accessProviders": []any{map[string]any{"name": "ocm", "cluster": map[string]any{
			"server": "https://127.0.0.1:1",
			"extensions": []any{map[string]any{"name": "client.authentication.k8s.io/exec",
				"extension": map[string]any{"command": "/bin/sh", "args": []any{"-c", "exit 1"}}}},
		}}},
	}
}

// profileCredentials is the consumer-side Secret (KEP-4322) giving Flotilla a kubeconfig.
func profileCredentials(name string, kubeconfig []byte) *corev1.Secret {
	return secret("flotilla-consumer", name+"-flotilla", map[string]string{
		sources.LabelClusterProfile: name, sources.LabelClusterProfileNamespace: "fleet",
	}, map[string][]byte{"config": kubeconfig})
}

func TestClusterProfiles(t *testing.T) {
	e := startEnv(t, sources.Options{ClusterProfiles: true, PublishClusterProfiles: true, KubeconfigSecrets: true}, func(hub client.Client) {
		installCRD(t, hub, "multicluster.x-k8s.io_clusterprofiles.yaml")
	}, "spoke-a", "spoke-b")
	ctx := context.Background()
	spokeA, spokeB := e.fleet.Plane("spoke-a"), e.fleet.Plane("spoke-b")
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-consumer",
		Labels: map[string]string{sources.LabelInventoryConsumer: "flotilla"}}})

	t.Run("a ClusterProfile is imported with the credentials given to Flotilla", func(t *testing.T) {
		e.create(t, profile("member-a"))
		cp := profile("member-a")
		e.updateStatus(t, cp, func() { cp.Object["status"] = profileStatus("True") })
		msg := e.event(t, "fleet", "member-a", sources.ReasonNoCredentials)
		if !strings.Contains(msg, "x-k8s.io/cluster-inventory-consumer=flotilla") {
			t.Errorf("event message %q does not say where credentials are looked for", msg)
		}
		e.absent(t, "member-a", time.Second)
		e.create(t, profileCredentials("member-a", kubeconfigOf(t, spokeA, nil)))
		c := e.cluster(t, "member-a", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		for k, v := range map[string]string{"topology.kubernetes.io/region": "eu-west-1", "tier": "gold", flotillav1.LabelSource: flotillav1.SourceClusterProfile} {
			if c.Labels[k] != v {
				t.Errorf("label %s = %q (labels %v)", k, c.Labels[k], c.Labels)
			}
		}
		if len(c.Spec.Taints) != 0 {
			t.Errorf("taints %v on a healthy cluster", c.Spec.Taints)
		}
		if !strings.Contains(logs.String(), "Importing clusters from ClusterProfiles") || !strings.Contains(logs.String(), "Publishing a ClusterProfile for every Cluster") {
			t.Error("the start-up log does not say that ClusterProfiles are imported and published")
		}
	})

	unhealthyTaint := flotillav1.ClusterTaint{Key: sources.TaintSourceUnhealthy, Effect: flotillav1.TaintEffectNoSchedule}
	t.Run("an unhealthy profile keeps new placements away, a healthy one lets them back", func(t *testing.T) {
		cp := profile("member-a")
		e.updateStatus(t, cp, func() { cp.Object["status"] = profileStatus("False") })
		e.cluster(t, "member-a", func(c *flotillav1.Cluster) error {
			if !slices.Contains(c.Spec.Taints, unhealthyTaint) {
				return fmt.Errorf("taints %v", c.Spec.Taints)
			}
			return nil
		})
		e.updateStatus(t, cp, func() { cp.Object["status"] = profileStatus("True") })
		e.cluster(t, "member-a", func(c *flotillav1.Cluster) error {
			if len(c.Spec.Taints) != 0 {
				return fmt.Errorf("taints %v", c.Spec.Taints)
			}
			return nil
		})
	})

	t.Run("rotated credentials re-engage the spoke", func(t *testing.T) {
		token := serviceAccountToken(t, spokeA, "profile-rotated")
		s := &corev1.Secret{}
		s.Namespace, s.Name = "flotilla-consumer", "member-a-flotilla"
		e.update(t, s, func() {
			s.Data["config"] = kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
				for name := range c.AuthInfos {
					c.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
				}
			})
		})
		e.probedAs(t, "spoke-a", "system:serviceaccount:default:profile-rotated")
	})

	t.Run("a malformed kubeconfig gives a clear condition", func(t *testing.T) {
		e.create(t, profileCredentials("member-bad", []byte("apiVersion: v1\nkind: Config\nusers: [oops")))
		e.create(t, profile("member-bad"))
		e.cluster(t, "member-bad", ready(metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid))
	})

	published := &unstructured.Unstructured{}
	published.SetGroupVersionKind(sources.ClusterProfileKind)
	t.Run("every other Cluster is published as a ClusterProfile", func(t *testing.T) {
		e.create(t, secret("flotilla-system", "kc-b", kubeconfigLabel, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeB, nil)}))
		c := e.cluster(t, "kc-b", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		fleettest.Eventually(t, wait, "ClusterProfile flotilla-system/kc-b", func() error {
			if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "kc-b"}, published); err != nil {
				return err
			}
			if published.GetLabels()[sources.LabelClusterManager] != "flotilla" {
				return fmt.Errorf("labels %v", published.GetLabels())
			}
			if m, _, _ := unstructured.NestedString(published.Object, "spec", "clusterManager", "name"); m != "flotilla" {
				return fmt.Errorf("clusterManager %q", m)
			}
			if v, _, _ := unstructured.NestedString(published.Object, "status", "version", "kubernetes"); v != c.Status.KubernetesVersion || v == "" {
				return fmt.Errorf("version %q", v)
			}
			conds, _, _ := unstructured.NestedSlice(published.Object, "status", "conditions")
			if len(conds) != 1 || conds[0].(map[string]any)["type"] != "ControlPlaneHealthy" || conds[0].(map[string]any)["status"] != "True" {
				return fmt.Errorf("conditions %v", conds)
			}
			props, _, _ := unstructured.NestedSlice(published.Object, "status", "properties")
			if len(props) != 1 || props[0].(map[string]any)["value"] != c.Labels[flotillav1.LabelClusterID] {
				return fmt.Errorf("properties %v", props)
			}
			return nil
		})
		// Clusters imported from a ClusterProfile are not published again, and Flotilla's own
		// profiles are not imported.
		err := e.hub.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "member-a"}, published.DeepCopy())
		if !apierrors.IsNotFound(err) {
			t.Errorf("a Cluster imported from a ClusterProfile was published again (%v)", err)
		}
		fleettest.Consistently(t, 2*time.Second, "kc-b stays a kubeconfig-secret cluster", func() error {
			c := e.cluster(t, "kc-b", nil)
			if c.Labels[flotillav1.LabelSource] != flotillav1.SourceKubeconfigSecret {
				return fmt.Errorf("labels %v", c.Labels)
			}
			return nil
		})
	})

	t.Run("a steady fleet costs no writes", func(t *testing.T) {
		profileWrites := func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Resource == "clusterprofiles" }
		before, beforeImports := len(e.flotillaWrites(t, "hub", profileWrites)), e.importerWrites(t)
		fleettest.Consistently(t, 3*time.Second, "no writes", func() error {
			if n := len(e.flotillaWrites(t, "hub", profileWrites)); n != before {
				return fmt.Errorf("%d ClusterProfile writes in steady state", n-before)
			}
			if n := e.importerWrites(t); n != beforeImports {
				return fmt.Errorf("%d importer writes in steady state", n-beforeImports)
			}
			return nil
		})
	})

	t.Run("deleting a profile disconnects; deleting a Cluster unpublishes it", func(t *testing.T) {
		if err := e.hub.Delete(ctx, profile("member-a")); err != nil {
			t.Fatal(err)
		}
		e.gone(t, "member-a")
		e.noDeletes(t, "spoke-a")
		if err := e.hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "kc-b"}}); err != nil {
			t.Fatal(err)
		}
		e.gone(t, "kc-b")
		fleettest.Eventually(t, wait, "published ClusterProfile deleted", func() error {
			err := e.hub.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "kc-b"}, published.DeepCopy())
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
		e.noDeletes(t, "spoke-b")
	})
}
