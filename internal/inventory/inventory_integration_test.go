package inventory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

const (
	probeInterval = 500 * time.Millisecond
	// canary is planted in credentials; it must never show up in logs, Events, status or metrics.
	canary = "canary-f1071lla-s3cr3t"
)

// logs captures everything the controller logs during the test.
var logs fleettest.SyncBuffer

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(&logs), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}

// env is a hub with the inventory running and two API-only spokes.
type env struct {
	fleet    *localfleet.Fleet
	hub      client.Client
	provider *inventory.Provider
}

func startEnv(t *testing.T) *env {
	t.Helper()
	return startEnvWith(t, inventory.Options{ProbeInterval: probeInterval, ProbeTimeout: 400 * time.Millisecond}, "spoke-a", "spoke-b")
}

// startEnvWith starts a hub with the inventory tuned by opts, and API-only spokes.
func startEnvWith(t *testing.T, opts inventory.Options, spokes ...string) *env {
	t.Helper()
	planes := []localfleet.PlaneSpec{fleettest.Hub()}
	for _, name := range spokes {
		planes = append(planes, fleettest.APIOnlySpoke(name))
	}
	fleet := fleettest.Start(t, planes...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hubCfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		t.Fatal(err)
	}
	scheme := install.Scheme()
	provider := inventory.New(scheme, opts)
	// Each test of the package starts its own manager in this one process: the controller
	// names repeat, which is what name validation would refuse.
	skip := true
	mgr, err := mcmanager.New(hubCfg, provider, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		t.Fatal(err)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-system"}})
	return &env{fleet: fleet, hub: hub, provider: provider}
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// kubeconfigOf returns a plane's admin kubeconfig, edited by mutate.
func kubeconfigOf(t *testing.T, p *localfleet.Plane, mutate func(*clientcmdapi.Config)) []byte {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(p.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(cfg)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// register creates a credentials Secret (unless data is nil) and a Cluster that references it.
func (e *env) register(t *testing.T, name string, data map[string][]byte) {
	t.Helper()
	if data != nil {
		mustCreate(t, e.hub, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: "flotilla-system"},
			Data:       data,
		})
	}
	mustCreate(t, e.hub, &flotillav1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "test"}},
		Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{
			Namespace: "flotilla-system", Name: name + "-kubeconfig", Key: "kubeconfig"}},
	})
}

// waitReady waits until the Cluster's Ready condition has this status and reason.
func (e *env) waitReady(t *testing.T, name string, status metav1.ConditionStatus, reason string, timeout time.Duration) *flotillav1.Cluster {
	t.Helper()
	var got flotillav1.Cluster
	fleettest.Eventually(t, timeout, fmt.Sprintf("cluster %s Ready=%s/%s", name, status, reason), func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKey{Name: name}, &got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, flotillav1.ClusterReady)
		if c == nil {
			return errors.New("no Ready condition yet")
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("Ready=%s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	return &got
}

func TestInventory(t *testing.T) {
	e := startEnv(t)
	ctx := context.Background()
	spokeA, spokeB := e.fleet.Plane("spoke-a"), e.fleet.Plane("spoke-b")

	// Good clusters, and every kind of bad input next to them.
	e.register(t, "good-a", map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, nil)})
	e.register(t, "good-b", map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeB, nil)})
	e.register(t, "no-secret", nil)
	e.register(t, "no-key", map[string][]byte{"other": []byte(canary)})
	e.register(t, "garbage", map[string][]byte{"kubeconfig": []byte("token: " + canary + "\n{{{")})
	e.register(t, "wrong-ca", map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
		other, _ := clientcmd.LoadFromFile(spokeB.KubeconfigPath())
		c.Clusters["spoke-a"].CertificateAuthorityData = other.Clusters["spoke-b"].CertificateAuthorityData
	})})
	e.register(t, "bad-token", map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
		c.AuthInfos["spoke-a"] = &clientcmdapi.AuthInfo{Token: canary}
	})})
	notKube := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>a web site</html>", http.StatusNotFound)
	}))
	t.Cleanup(notKube.Close)
	e.register(t, "not-kube", map[string][]byte{"kubeconfig": kubeconfigFor(t, notKube)})

	good := e.waitReady(t, "good-a", metav1.ConditionTrue, flotillav1.ReasonProbed, 30*time.Second)
	e.waitReady(t, "good-b", metav1.ConditionTrue, flotillav1.ReasonProbed, 30*time.Second)
	e.waitReady(t, "no-secret", metav1.ConditionFalse, flotillav1.ReasonSecretNotFound, 30*time.Second)
	e.waitReady(t, "no-key", metav1.ConditionFalse, flotillav1.ReasonKubeconfigKeyMissing, 30*time.Second)
	e.waitReady(t, "garbage", metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid, 30*time.Second)
	e.waitReady(t, "wrong-ca", metav1.ConditionFalse, flotillav1.ReasonCertificateInvalid, 30*time.Second)
	e.waitReady(t, "bad-token", metav1.ConditionFalse, flotillav1.ReasonUnauthorized, 30*time.Second)
	e.waitReady(t, "not-kube", metav1.ConditionFalse, flotillav1.ReasonNotKubernetes, 30*time.Second)

	t.Run("a ready cluster reports version and engagement", func(t *testing.T) {
		if good.Status.KubernetesVersion != localfleet.KubernetesVersion {
			t.Errorf("kubernetesVersion = %q, want %s", good.Status.KubernetesVersion, localfleet.KubernetesVersion)
		}
		if good.Status.ObservedGeneration != good.Generation {
			t.Errorf("observedGeneration = %d, want %d", good.Status.ObservedGeneration, good.Generation)
		}
		for _, name := range []string{"good-a", "good-b"} {
			if _, err := e.provider.Get(ctx, multicluster.ClusterName(name)); err != nil {
				t.Errorf("%s not engaged: %v", name, err)
			}
		}
		for _, name := range []string{"no-secret", "garbage", "wrong-ca", "bad-token", "not-kube"} {
			if _, err := e.provider.Get(ctx, multicluster.ClusterName(name)); !errors.Is(err, multicluster.ErrClusterNotFound) {
				t.Errorf("%s engaged despite bad credentials (err %v)", name, err)
			}
		}
	})

	t.Run("a stopped spoke turns Unknown and recovers without a restart", func(t *testing.T) {
		marker := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "still-here", Namespace: "default"}}
		spokeClient, err := client.New(spokeB.RESTConfig(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mustCreate(t, spokeClient, marker)
		stopped := time.Now()
		spokeB.Stop()
		e.waitReady(t, "good-b", metav1.ConditionUnknown, flotillav1.ReasonUnreachable, 2*probeInterval+2*time.Second)
		t.Logf("Unknown %s after the spoke stopped", time.Since(stopped).Round(10*time.Millisecond))
		e.waitReady(t, "good-a", metav1.ConditionTrue, flotillav1.ReasonProbed, time.Second) // unaffected
		if err := spokeB.Start(ctx); err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		e.waitReady(t, "good-b", metav1.ConditionTrue, flotillav1.ReasonProbed, probeInterval+2*time.Second)
		t.Logf("Ready %s after the spoke started", time.Since(started).Round(10*time.Millisecond))
		if err := spokeClient.Get(ctx, client.ObjectKeyFromObject(marker), marker); err != nil {
			t.Fatalf("object on the spoke lost: %v", err)
		}
	})

	t.Run("rotated credentials re-engage without a restart", func(t *testing.T) {
		before, err := e.provider.Get(ctx, "good-a")
		if err != nil {
			t.Fatal(err)
		}
		secret := &corev1.Secret{}
		key := client.ObjectKey{Namespace: "flotilla-system", Name: "good-a-kubeconfig"}
		if err := e.hub.Get(ctx, key, secret); err != nil {
			t.Fatal(err)
		}
		// Same spoke, different bytes: a rename of the context is enough to be a rotation.
		secret.Data["kubeconfig"] = kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
			c.Contexts["rotated"] = c.Contexts["spoke-a"]
			delete(c.Contexts, "spoke-a")
			c.CurrentContext = "rotated"
		})
		if err := e.hub.Update(ctx, secret); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 10*time.Second, "good-a re-engaged with new credentials", func() error {
			after, err := e.provider.Get(ctx, "good-a")
			if err != nil {
				return err
			}
			if after == before {
				return errors.New("still the old engaged cluster")
			}
			return nil
		})
		e.waitReady(t, "good-a", metav1.ConditionTrue, flotillav1.ReasonProbed, 10*time.Second)
	})

	t.Run("a deleted Secret disengages and leaves the spoke alone", func(t *testing.T) {
		if err := e.hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "good-a-kubeconfig"}}); err != nil {
			t.Fatal(err)
		}
		e.waitReady(t, "good-a", metav1.ConditionFalse, flotillav1.ReasonSecretNotFound, 10*time.Second)
		if _, err := e.provider.Get(ctx, "good-a"); !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Fatalf("good-a still engaged after its Secret was deleted: %v", err)
		}
		spokeClient, err := client.New(spokeA.RESTConfig(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var nss corev1.NamespaceList
		if err := spokeClient.List(ctx, &nss); err != nil || len(nss.Items) < 4 {
			t.Fatalf("spoke namespaces after disengage: %d, %v", len(nss.Items), err)
		}
	})

	t.Run("a deleted Cluster disengages", func(t *testing.T) {
		if err := e.hub.Delete(ctx, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "good-b"}}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 10*time.Second, "good-b disengaged", func() error {
			if _, err := e.provider.Get(ctx, "good-b"); !errors.Is(err, multicluster.ErrClusterNotFound) {
				return fmt.Errorf("still engaged (%v)", err)
			}
			return nil
		})
	})

	t.Run("credentials never appear in logs, Events, status or metrics", func(t *testing.T) {
		if strings.Contains(logs.String(), canary) {
			t.Error("the canary token appears in the controller's logs")
		}
		if !strings.Contains(logs.String(), "Engaged spoke") {
			t.Error("the captured log is empty or misses engagement; the canary check proves nothing")
		}
		var events corev1.EventList
		if err := e.hub.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		if len(events.Items) == 0 {
			t.Error("no Events recorded for Cluster readiness")
		}
		for _, ev := range events.Items {
			if strings.Contains(ev.Message, canary) {
				t.Errorf("Event %s carries the canary: %s", ev.Name, ev.Message)
			}
		}
		var clusters flotillav1.ClusterList
		if err := e.hub.List(ctx, &clusters); err != nil {
			t.Fatal(err)
		}
		for _, c := range clusters.Items {
			for _, cond := range c.Status.Conditions {
				if strings.Contains(cond.Message, canary) {
					t.Errorf("cluster %s condition carries the canary: %s", c.Name, cond.Message)
				}
			}
		}
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		for _, f := range families {
			if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(text.String(), canary) {
			t.Error("the canary appears in metrics")
		}
		if !strings.Contains(text.String(), "flotilla_cluster_ready") {
			t.Error("no flotilla_cluster_ready metric exported")
		}
	})
}

// kubeconfigFor returns a kubeconfig for an httptest TLS server, trusting its certificate.
func kubeconfigFor(t *testing.T, srv *httptest.Server) []byte {
	t.Helper()
	var ca bytes.Buffer
	if err := pemEncodeCert(&ca, srv.Certificate().Raw); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["web"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca.Bytes()}
	cfg.AuthInfos["web"] = &clientcmdapi.AuthInfo{Token: canary}
	cfg.Contexts["web"] = &clientcmdapi.Context{Cluster: "web", AuthInfo: "web"}
	cfg.CurrentContext = "web"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
