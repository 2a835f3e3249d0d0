package hub

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// canary is planted in Secret data on the hub; it must never show up outside a delivered Secret.
const canary = "canary-s3cr3t-d4t4-f1071lla"

// logs captures everything controllers log in this test binary, at the most verbose level.
var logs fleettest.SyncBuffer

func TestMain(m *testing.M) {
	var w io.Writer = &logs
	if os.Getenv(fleettest.LogEnv) != "" {
		w = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}

// recordingCache is the hub cache, noting every kind and Go type the controller asks it for:
// through its client (Get, List) and through watches (GetInformer).
type recordingCache struct {
	cache.Cache
	scheme *runtime.Scheme

	mu   sync.Mutex
	asks map[string]bool // "<Go type> <kind>", e.g. "*v1.PartialObjectMetadataList Secret"
}

func (c *recordingCache) new(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	inner, err := cache.New(cfg, opts)
	c.Cache = inner
	return c, err
}

func (c *recordingCache) record(obj runtime.Object) {
	kind := "unknown"
	if gvk, err := apiutil.GVKForObject(obj, c.scheme); err == nil {
		kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asks[fmt.Sprintf("%T %s", obj, kind)] = true
}

func (c *recordingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.record(obj)
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c *recordingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.record(list)
	return c.Cache.List(ctx, list, opts...)
}

func (c *recordingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	c.record(obj)
	return c.Cache.GetInformer(ctx, obj, opts...)
}

func (c *recordingCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	c.mu.Lock()
	c.asks["kind "+gvk.Kind] = true
	c.mu.Unlock()
	return c.Cache.GetInformerForKind(ctx, gvk, opts...)
}

// secretAsks returns what the controller asked the cache for about Secrets.
func (c *recordingCache) secretAsks() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for a := range c.asks {
		if strings.HasSuffix(a, " Secret") {
			out = append(out, a)
		}
	}
	return out
}

// TestSecretsStaySecret runs the hub controller with a ClusterPropagation that selects every
// Secret on the hub, a Propagation that ships a Secret from a manifest Secret, and one whose
// manifest Secret is malformed, with a canary value in all of them:
//   - no Secret holding credentials is delivered (flotilla-system, a Cluster's credentials
//     elsewhere, a ServiceAccount token), which the spoke's own listing and audit log show;
//   - the hub cache never holds a whole Secret: the controller asks it for Secrets only as
//     metadata;
//   - the canary appears in no Propagation status, hub Event, controller log line or metric.
func TestSecretsStaySecret(t *testing.T) {
	spokeSpec := fleettest.APIOnlySpoke("spoke-a")
	spokeSpec.AuditLog = true
	fleet := fleettest.Start(t, fleettest.Hub(), spokeSpec)
	ctx := context.Background()
	hubCfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		t.Fatal(err)
	}
	scheme := install.Scheme()
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	spokeCfg := fleet.Plane("spoke-a").RESTConfig()
	spoke, err := client.New(spokeCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	rec := &recordingCache{scheme: scheme, asks: map[string]bool{}}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(runCtx, hubCfg, Options{MetricsAddr: "0", HealthAddr: "0", newCache: rec.new,
			Inventory: inventory.Options{ProbeInterval: 500 * time.Millisecond}})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("hub controller: %v", err)
		}
	})
	if err := membership.Join(ctx, hub, membership.JoinOptions{Name: "spoke-a", Spoke: spokeCfg, Labels: map[string]string{"region": "eu"}}); err != nil {
		t.Fatal(err)
	}

	create := func(obj client.Object) {
		t.Helper()
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	secret := func(ns, name string, typ corev1.SecretType, data map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: typ, StringData: data}
	}
	eu := flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "creds"}})
	create(&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "eu"}, Spec: eu})
	create(&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: "eu"}, Spec: eu})

	// What may be delivered: an ordinary Secret, and manifest Secrets (themselves ordinary).
	create(secret("team", "app", corev1.SecretTypeOpaque, map[string]string{"password": canary}))
	create(secret("team", "manifests", corev1.SecretTypeOpaque, map[string]string{"token.yaml": "apiVersion: v1\nkind: Secret\n" +
		"metadata:\n  name: shipped\nstringData:\n  token: " + canary + "\n"}))
	create(secret("team", "malformed", corev1.SecretTypeOpaque, map[string]string{"k": "apiVersion: v1\nkind: Secret\n" +
		"metadata:\n  name: x\nstringData:\n  port: !!int " + canary + "\n"}))
	// What must never be: credentials. A Secret in flotilla-system besides join's, a Cluster's
	// credentials in another namespace, and a ServiceAccount token.
	create(secret(membership.Namespace, "extra", corev1.SecretTypeOpaque, map[string]string{"v": canary}))
	create(secret("creds", "elsewhere-kubeconfig", corev1.SecretTypeOpaque, map[string]string{"kubeconfig": canary}))
	create(&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}, Spec: flotillav1.ClusterSpec{
		Credentials: flotillav1.KubeconfigSecretRef{Namespace: "creds", Name: "elsewhere-kubeconfig", Key: "kubeconfig"}}})
	create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "builder"}})
	token := secret("team", "builder-token", corev1.SecretTypeServiceAccountToken, map[string]string{"token": canary})
	token.Annotations = map[string]string{corev1.ServiceAccountNameKey: "builder"}
	create(token)

	create(&flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "all-secrets"}, Spec: flotillav1.PropagationSpec{
		PlacementRef:      flotillav1.PlacementRef{Namespace: membership.Namespace, Name: "eu"},
		ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Secret"}}}})
	create(&flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "system-secrets"}, Spec: flotillav1.PropagationSpec{
		PlacementRef:      flotillav1.PlacementRef{Namespace: membership.Namespace, Name: "eu"},
		ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Secret", Namespace: membership.Namespace}}}})
	create(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shipped"}, Spec: flotillav1.PropagationSpec{
		PlacementRef: flotillav1.PlacementRef{Name: "eu"},
		Manifests:    []flotillav1.ManifestSource{{Kind: "Secret", Name: "manifests"}}}})
	create(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "malformed"}, Spec: flotillav1.PropagationSpec{
		PlacementRef: flotillav1.PlacementRef{Name: "eu"},
		Manifests:    []flotillav1.ManifestSource{{Kind: "Secret", Name: "malformed"}}}})

	condition := func(obj client.Object, status *flotillav1.PropagationStatus, reason string) *metav1.Condition {
		t.Helper()
		var got *metav1.Condition
		fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("%T %s %s", obj, obj.GetName(), reason), func() error {
			if err := hub.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			got = apimeta.FindStatusCondition(status.Conditions, flotillav1.PropagationApplied)
			if got == nil || got.Reason != reason || status.ObservedGeneration != obj.GetGeneration() {
				return fmt.Errorf("Applied condition %+v", got)
			}
			return nil
		})
		return got
	}
	all := &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "all-secrets"}}
	condition(all, &all.Status, flotillav1.ReasonApplied)
	system := &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "system-secrets"}}
	if c := condition(system, &system.Status, flotillav1.ReasonInvalidSpec); !strings.Contains(c.Message, "spoke credentials") {
		t.Errorf("a selector naming %s says %q", membership.Namespace, c.Message)
	}
	shipped := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shipped"}}
	condition(shipped, &shipped.Status, flotillav1.ReasonApplied)
	malformed := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "malformed"}}
	if c := condition(malformed, &malformed.Status, flotillav1.ReasonInvalidSpec); !strings.Contains(c.Message, `Secret malformed key "k" document 1: not valid YAML or JSON`) {
		t.Errorf("a malformed manifest Secret says %q", c.Message)
	}

	t.Run("only ordinary Secrets are delivered", func(t *testing.T) {
		var delivered corev1.SecretList
		if err := spoke.List(ctx, &delivered, client.HasLabels{flotillav1.LabelOwner}); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range delivered.Items {
			got[s.Namespace+"/"+s.Name] = string(s.Data["password"]) + string(s.Data["token"])
		}
		want := map[string]string{"team/app": canary, "team/manifests": "", "team/malformed": "", "team/shipped": canary}
		for name, value := range want {
			if v, ok := got[name]; !ok || v != value {
				t.Errorf("%s on the spoke: %q (delivered: %v)", name, v, slices.Sorted(maps.Keys(got)))
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s was delivered to the spoke", name)
			}
		}
		// The audit log shows no attempt either, not even one that failed.
		events, err := fleet.Plane("spoke-a").AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			ref := ev.ObjectRef
			if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ref.Resource == "secrets" &&
				(ref.Namespace == membership.Namespace || ref.Name == "builder-token" || ref.Name == "elsewhere-kubeconfig") {
				t.Errorf("Flotilla wrote a credentials Secret to the spoke: %s %s", ev.Verb, ev.RequestURI)
			}
		}
	})

	t.Run("the hub cache holds Secrets as metadata only", func(t *testing.T) {
		asks := rec.secretAsks()
		if !slices.Contains(asks, "*v1.PartialObjectMetadataList Secret") {
			t.Errorf("the selection did not list Secrets' metadata from the cache (asks: %v); the check proves nothing", asks)
		}
		for _, a := range asks {
			if !strings.HasPrefix(a, "*v1.PartialObjectMetadata") {
				t.Errorf("the controller asked the hub cache for %s: every Secret's data would be cached", a)
			}
		}
	})

	t.Run("Secret data never appears in status, Events, logs or metrics", func(t *testing.T) {
		// A drift on a delivered Secret: the correction's Event names the field, not the value.
		app := &corev1.Secret{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "app"}, app); err != nil {
			t.Fatal(err)
		}
		before := app.DeepCopy()
		app.Data["password"] = []byte(canary + "-edited")
		if err := spoke.Patch(ctx, app, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 30*time.Second, "the drift corrected, with an Event", func() error {
			var events corev1.EventList
			if err := hub.List(ctx, &events); err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.Reason == "DriftCorrected" && strings.Contains(ev.Message, "/data/password") {
					return nil
				}
			}
			return fmt.Errorf("no DriftCorrected Event among %d", len(events.Items))
		})
		leaks := func(s string) bool {
			for _, v := range []string{canary, base64.StdEncoding.EncodeToString([]byte(canary)), canary[:12]} {
				if strings.Contains(s, v) {
					return true
				}
			}
			return false
		}

		var events corev1.EventList
		if err := hub.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events.Items {
			if leaks(ev.Message) {
				t.Errorf("Event %s/%s carries Secret data: %s", ev.Namespace, ev.Name, ev.Message)
			}
		}
		var props flotillav1.PropagationList
		var cprops flotillav1.ClusterPropagationList
		if err := hub.List(ctx, &props); err != nil {
			t.Fatal(err)
		}
		if err := hub.List(ctx, &cprops); err != nil {
			t.Fatal(err)
		}
		statuses := []any{}
		for _, p := range props.Items {
			statuses = append(statuses, p.Status)
		}
		for _, p := range cprops.Items {
			statuses = append(statuses, p.Status)
		}
		for _, s := range statuses {
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if leaks(string(data)) {
				t.Errorf("a status carries Secret data: %s", data)
			}
		}
		log := logs.String()
		if leaks(log) {
			t.Error("Secret data appears in the controller's logs")
		}
		if !strings.Contains(log, "DriftCorrected") || !strings.Contains(log, "InvalidSpec") {
			t.Error("the captured log misses the drift and InvalidSpec Events; the check proves nothing")
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
		if leaks(text.String()) {
			t.Error("Secret data appears in metrics")
		}
		if !strings.Contains(text.String(), "flotilla_drift_events_total") {
			t.Error("no flotilla_drift_events_total metric; the check proves little")
		}
	})
}
