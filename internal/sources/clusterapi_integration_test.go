package sources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// capiCluster is a Cluster API Cluster of this version.
func capiCluster(version, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetGroupVersionKind(sources.CAPIClusterKind.WithVersion(version))
	u.SetNamespace("capi")
	u.SetName(name)
	u.SetLabels(labels)
	if version == "v1beta2" { // its spec must not be empty
		u.Object["spec"] = map[string]any{"controlPlaneEndpoint": map[string]any{"host": "127.0.0.1", "port": int64(6443)}}
	}
	return u
}

// setPhase writes a Cluster API Cluster's status.phase, as Cluster API's controllers do.
func (e *env) setPhase(t *testing.T, version, name, phase string) {
	t.Helper()
	u := capiCluster(version, name, nil)
	e.updateStatus(t, u, func() { _ = unstructured.SetNestedField(u.Object, phase, "status", "phase") })
}

func (e *env) updateStatus(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	ctx := context.Background()
	if err := e.hub.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate()
	}
	if err := e.hub.Status().Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

func capiSecret(name string, kubeconfig []byte) *corev1.Secret {
	s := secret("capi", name+"-kubeconfig", map[string]string{sources.CAPIClusterNameLabel: name}, map[string][]byte{"value": kubeconfig})
	s.Type = "cluster.x-k8s.io/secret"
	return s
}

func TestClusterAPI(t *testing.T) {
	e := startEnv(t, sources.Options{ClusterAPI: true, ClusterAPINamespaces: []string{"capi"}, KubeconfigSecrets: true}, func(hub client.Client) {
		installCRD(t, hub, "cluster.x-k8s.io_clusters.yaml")
	}, "spoke-a", "spoke-b")
	ctx := context.Background()
	spokeA, spokeB := e.fleet.Plane("spoke-a"), e.fleet.Plane("spoke-b")
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "capi"}})

	t.Run("a tenant's Cluster API cluster in its own namespace does not join the fleet", func(t *testing.T) {
		// The tenant holds `edit` in its namespace, and may create Cluster API clusters there, as
		// installations that let teams create clusters grant. An API-only hub runs no
		// controller to aggregate roles into `edit`, so what edit holds that this test uses
		// (Secrets) is bound explicitly beside it.
		e.create(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "capi-edit"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"clusters", "clusters/status"}, Verbs: []string{"*"}},
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update", "patch", "delete"}},
			}})
		e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
		fleettest.Grant(t, ctx, e.hub, "team", fleettest.Tenant, "edit")
		fleettest.Grant(t, ctx, e.hub, "team", fleettest.Tenant, "capi-edit")
		tenant, err := client.New(fleettest.As(e.fleet.Hub().RESTConfig(), fleettest.Tenant), client.Options{Scheme: e.hub.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		before := e.importerWrites(t)
		kc := capiSecret("rogue", kubeconfigOf(t, spokeA, nil))
		kc.Namespace = "team"
		rogue := capiCluster("v1beta2", "rogue", map[string]string{"tier": "gold", "env": "prod"})
		rogue.SetNamespace("team")
		fleettest.Eventually(t, wait, "the tenant creates a Cluster API cluster", func() error {
			return tenant.Create(ctx, rogue)
		})
		if err := tenant.Create(ctx, kc); err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(rogue.Object, "Provisioned", "status", "phase")
		if err := tenant.Status().Update(ctx, rogue); err != nil {
			t.Fatal(err)
		}
		e.absent(t, "rogue", 3*time.Second)
		if n := e.importerWrites(t); n != before {
			t.Errorf("the importers wrote %d times on the hub for the tenant's cluster", n-before)
		}
		if strings.Contains(logs.String(), "team/rogue") {
			t.Error("the importer looked at the tenant's cluster")
		}
	})

	t.Run("a v1beta2 cluster is imported once provisioned, with its labels", func(t *testing.T) {
		e.create(t, capiCluster("v1beta2", "capi-a", map[string]string{"tier": "gold", "topology.cluster.x-k8s.io/owned": ""}))
		e.create(t, capiSecret("capi-a", kubeconfigOf(t, spokeA, nil)))
		e.setPhase(t, "v1beta2", "capi-a", "Provisioning")
		e.absent(t, "capi-a", 2*time.Second)
		e.setPhase(t, "v1beta2", "capi-a", "Provisioned")
		c := e.cluster(t, "capi-a", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		if c.Labels["tier"] != "gold" || c.Labels[flotillav1.LabelSource] != flotillav1.SourceClusterAPI {
			t.Errorf("labels %v", c.Labels)
		}
		if _, ok := c.Labels["topology.cluster.x-k8s.io/owned"]; ok {
			t.Errorf("Cluster API's own label was carried over: %v", c.Labels)
		}
		if c.Annotations[flotillav1.AnnotationSourceRef] != "capi/capi-a" {
			t.Errorf("source-ref %q", c.Annotations[flotillav1.AnnotationSourceRef])
		}
		e.event(t, "capi", "capi-a", sources.ReasonImported)
		// The importer has run since the tenant's cluster was provisioned, and left it out.
		if err := e.hub.Get(ctx, client.ObjectKey{Name: "rogue"}, &flotillav1.Cluster{}); !apierrors.IsNotFound(err) {
			t.Errorf("the tenant's Cluster API cluster was imported (%v)", err)
		}
		if !strings.Contains(logs.String(), "Importing provisioned Cluster API clusters") || !strings.Contains(logs.String(), "cluster.x-k8s.io/v1beta2") {
			t.Error("the start-up log does not say that Cluster API clusters (v1beta2) are imported")
		}
	})

	t.Run("a v1beta1 cluster is imported too", func(t *testing.T) {
		e.create(t, capiSecret("capi-b", kubeconfigOf(t, spokeB, nil)))
		e.create(t, capiCluster("v1beta1", "capi-b", map[string]string{"tier": "bronze"}))
		e.setPhase(t, "v1beta1", "capi-b", "Provisioned")
		c := e.cluster(t, "capi-b", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		if c.Labels["tier"] != "bronze" {
			t.Errorf("labels %v", c.Labels)
		}
	})

	t.Run("label changes are carried over", func(t *testing.T) {
		u := capiCluster("v1beta2", "capi-a", nil)
		e.update(t, u, func() { u.SetLabels(map[string]string{"tier": "silver", "zone": "z1"}) })
		e.cluster(t, "capi-a", func(c *flotillav1.Cluster) error {
			if c.Labels["tier"] != "silver" || c.Labels["zone"] != "z1" {
				return errorf("labels %v", c.Labels)
			}
			return nil
		})
	})

	t.Run("rotated credentials re-engage the spoke", func(t *testing.T) {
		token := serviceAccountToken(t, spokeA, "capi-rotated")
		s := &corev1.Secret{}
		s.Namespace, s.Name = "capi", "capi-a-kubeconfig"
		e.update(t, s, func() {
			s.Data["value"] = kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
				for name := range c.AuthInfos {
					c.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
				}
			})
		})
		e.probedAs(t, "spoke-a", "system:serviceaccount:default:capi-rotated")
	})

	t.Run("the same spoke from a kubeconfig Secret is reported, not engaged twice", func(t *testing.T) {
		e.create(t, secret("flotilla-system", "dup-a", kubeconfigLabel, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, nil)}))
		msg := e.event(t, "flotilla-system", "dup-a", sources.ReasonDuplicateCluster)
		if !strings.Contains(msg, "Cluster capi-a") || !strings.Contains(msg, "cluster-api capi/capi-a") {
			t.Errorf("event message %q does not name the Cluster and where it came from", msg)
		}
		e.absent(t, "dup-a", 2*time.Second)
	})

	t.Run("a malformed kubeconfig gives a clear condition", func(t *testing.T) {
		e.create(t, capiSecret("capi-c", []byte("this is not a kubeconfig: [")))
		e.create(t, capiCluster("v1beta2", "capi-c", nil))
		e.setPhase(t, "v1beta2", "capi-c", "Provisioned")
		e.cluster(t, "capi-c", ready(metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid))
		e.event(t, "capi", "capi-c", sources.ReasonKubeconfigRefused)
	})

	t.Run("de-provisioning disconnects, and the other registration takes over", func(t *testing.T) {
		e.setPhase(t, "v1beta2", "capi-a", "Deleting")
		e.gone(t, "capi-a")
		c := e.cluster(t, "dup-a", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		if c.Labels[flotillav1.LabelSource] != flotillav1.SourceKubeconfigSecret {
			t.Errorf("labels %v", c.Labels)
		}
		e.noDeletes(t, "spoke-a")
	})

	t.Run("deleting the Cluster API cluster disconnects and deletes nothing on the spoke", func(t *testing.T) {
		if err := e.hub.Delete(ctx, capiCluster("v1beta1", "capi-b", nil)); err != nil {
			t.Fatal(err)
		}
		e.gone(t, "capi-b")
		e.noDeletes(t, "spoke-b")
	})
}
