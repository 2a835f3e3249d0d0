package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

const wait = time.Minute

// logs captures what the hub controller and the agent log in this test binary.
var logs fleettest.SyncBuffer

func TestMain(m *testing.M) {
	var w io.Writer = &logs
	if os.Getenv(fleettest.LogEnv) != "" {
		w = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}

// switchable stands between the agent and the hub's work endpoint: up, it passes requests
// on; down, it drops each connection unanswered, as a hub that is away does, and counts the
// requests it dropped.
type switchable struct {
	up      atomic.Bool
	dropped atomic.Int64
	proxy   *httputil.ReverseProxy
}

func (s *switchable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.up.Load() {
		s.proxy.ServeHTTP(w, r)
		return
	}
	s.dropped.Add(1)
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// TestPullCluster: a hub, a push spoke and a pull spoke whose agent runs in this process. A
// Propagation's ConfigMap reaches both; the Propagation counts the pull cluster from the
// agent's results; a spoke-side edit on the pull spoke is reverted by the agent; a transparent
// Deployment reaches both spokes and its status on the hub counts the pull cluster's ready copy
// from the agent's report; while the
// hub's work endpoint is away the pull spoke's audit log shows no delete by the agent, and a
// hub edit made meanwhile arrives once it is back.
func TestPullCluster(t *testing.T) {
	ctx := context.Background()
	pullSpec := fleettest.APIOnlySpoke("edge")
	pullSpec.AuditLog = true
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("core"), pullSpec)
	hubc := hubtest.Install(t, fleet)
	urls := make(chan string, 1)
	hubtest.Run(t, fleet, func(o *hub.Options) {
		o.WorkAddr, o.WorkReady = "127.0.0.1:0", func(url string) { urls <- url }
	})
	if err := membership.Join(ctx, hubc, membership.JoinOptions{Name: "core", Spoke: fleet.Plane("core").RESTConfig()}); err != nil {
		t.Fatal(err)
	}
	// The pull cluster: no credentials on the hub, an agent identity.
	create(t, hubc, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull}})
	if _, err := membership.GrantAgent(ctx, hubc, "edge"); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeToken(t, fleet, tokenFile)

	var base string
	select {
	case base = <-urls:
	case <-time.After(wait):
		t.Fatal("the work endpoint never listened")
	}
	target, _ := url.Parse(base)
	gate := &switchable{proxy: httputil.NewSingleHostReverseProxy(target)}
	gate.up.Store(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gate, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	agentCtx, stopAgent := context.WithCancel(ctrl.LoggerInto(ctx, ctrl.Log))
	done := make(chan error, 1)
	go func() {
		done <- agent.Run(agentCtx, agent.Options{Cluster: "edge", WorkURL: "http://" + ln.Addr().String(), TokenFile: tokenFile,
			Spoke: fleet.Plane("edge").RESTConfig(), PollInterval: 200 * time.Millisecond})
	}()
	t.Cleanup(func() {
		stopAgent()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})

	create(t, hubc, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	create(t, hubc, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	create(t, hubc, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}, Data: map[string]string{"v": "v1"}})
	create(t, hubc, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}}}})

	edge, core := spokeClient(t, fleet, "edge"), spokeClient(t, fleet, "core")
	start := time.Now()
	hasValue(t, core, "v1")
	hasValue(t, edge, "v1")
	t.Logf("the ConfigMap reached both spokes in %s", time.Since(start).Round(time.Millisecond))

	// The owner's status counts the pull cluster from what its agent reported.
	fleettest.Eventually(t, wait, "the Propagation counts both clusters applied", func() error {
		p := &flotillav1.Propagation{}
		if err := hubc.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, p); err != nil {
			return err
		}
		for _, r := range p.Status.ClusterResults {
			if r.Cluster == "edge" && r.Applied != 1 {
				return fmt.Errorf("edge: %+v", r)
			}
		}
		if p.Status.AppliedClusters != 2 || p.Status.TargetClusters != 2 {
			return fmt.Errorf("applied %d of %d clusters: %+v", p.Status.AppliedClusters, p.Status.TargetClusters, p.Status.ClusterResults)
		}
		return nil
	})

	// Drift on the pull spoke is reverted there, by the agent.
	start = time.Now()
	setValue(t, edge, "tampered")
	hasValue(t, edge, "v1")
	t.Logf("the agent reverted a spoke-side edit in %s", time.Since(start).Round(time.Millisecond))

	// A transparent Deployment reaches the pull spoke too, and its status on the hub counts the
	// pull cluster's copy from what the agent reports.
	start = time.Now()
	create(t, hubc, webDeployment())
	for _, c := range []client.Client{core, edge} {
		readyCopy(t, c)
	}
	fleettest.Eventually(t, wait, "the hub's Deployment counts both copies ready", func() error {
		d := &appsv1.Deployment{}
		if err := hubc.Get(ctx, web, d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 || d.Status.AvailableReplicas != 2 || d.Status.ObservedGeneration != d.Generation {
			return fmt.Errorf("status %+v", d.Status)
		}
		return nil
	})
	t.Logf("a transparent Deployment reached both spokes and counted both ready in %s", time.Since(start).Round(time.Millisecond))

	// The hub goes away: the agent's requests fail; it keeps the last work and deletes nothing.
	gate.up.Store(false)
	away := time.Now()
	cm := &corev1.ConfigMap{}
	if err := hubc.Get(ctx, client.ObjectKey{Namespace: "team", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "v2"
	if err := hubc.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	hasValue(t, core, "v2") // the hub delivered the edit where it can
	fleettest.Eventually(t, wait, "the agent tried the hub for a few seconds", func() error {
		if n := gate.dropped.Load(); n < 10 || time.Since(away) < 3*time.Second {
			return fmt.Errorf("%d requests dropped", n)
		}
		return nil
	})
	if got := value(t, edge); got != "v1" {
		t.Fatalf("while the hub is away the pull spoke has %q, want the last work (v1)", got)
	}
	noDeletes(t, fleet.Plane("edge"))
	if !strings.Contains(logs.String(), "keeping the last work applied and drift-corrected, deleting nothing") {
		t.Error("the agent did not say it keeps the last work")
	}

	// The hub returns: the edit made meanwhile arrives.
	gate.up.Store(true)
	start = time.Now()
	hasValue(t, edge, "v2")
	t.Logf("the hub's edit arrived %s after it returned", time.Since(start).Round(time.Millisecond))
	noDeletes(t, fleet.Plane("edge"))
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// writeToken writes a token of the pull cluster's agent for the work endpoint.
func writeToken(t *testing.T, fleet *localfleet.Fleet, file string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(fleet.Hub().RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(membership.Namespace).CreateToken(context.Background(), membership.AgentServiceAccount("edge"),
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{clusterwork.Audience}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(tr.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
}

func spokeClient(t *testing.T, fleet *localfleet.Fleet, name string) client.Client {
	t.Helper()
	c, err := client.New(fleet.Plane(name).RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var settings = client.ObjectKey{Namespace: "team", Name: "settings"}

// value is the ConfigMap's data.v on a spoke ("" when it is not there).
func value(t *testing.T, c client.Client) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), settings, cm); err != nil {
		return ""
	}
	return cm.Data["v"]
}

func hasValue(t *testing.T, c client.Client, want string) {
	t.Helper()
	fleettest.Eventually(t, wait, "the spoke's ConfigMap has v="+want, func() error {
		if got := value(t, c); got != want {
			return fmt.Errorf("v=%q", got)
		}
		return nil
	})
}

func setValue(t *testing.T, c client.Client, v string) {
	t.Helper()
	fleettest.Eventually(t, wait, "edit the spoke's ConfigMap", func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), settings, cm); err != nil {
			return err
		}
		cm.Data["v"] = v
		return c.Update(context.Background(), cm)
	})
}

// noDeletes fails if the plane's audit log shows a delete by the agent.
func noDeletes(t *testing.T, plane *localfleet.Plane) {
	t.Helper()
	events, err := plane.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var seen, deletes []string
	for _, ev := range events {
		if !strings.HasPrefix(ev.UserAgent, agent.UserAgent) {
			continue
		}
		seen = append(seen, ev.Verb)
		if ev.Verb == "delete" || ev.Verb == "deletecollection" {
			deletes = append(deletes, ev.Verb+" "+ev.ObjectRef.Resource+" "+ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name)
		}
	}
	if len(seen) == 0 {
		t.Fatal(errors.New("the audit log shows no request of the agent at all: the check would prove nothing"))
	}
	if len(deletes) > 0 {
		t.Fatalf("the agent deleted on the pull spoke: %s", strings.Join(deletes, "; "))
	}
}

var web = client.ObjectKey{Namespace: "team", Name: "web"}

// webDeployment is a transparent Deployment of 2 replicas placed on every cluster: one each.
func webDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: web.Name, Namespace: web.Namespace, Labels: map[string]string{flotillav1.LabelPlacement: "all"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}},
	}
}

// readyCopy waits for the Deployment's copy of one replica on a spoke, and writes its status
// as a Deployment controller would once the replica runs (the spokes run no controllers).
func readyCopy(t *testing.T, c client.Client) {
	t.Helper()
	fleettest.Eventually(t, wait, "the Deployment's copy is on the spoke, and ready", func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(context.Background(), web, d); err != nil {
			return err
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			return fmt.Errorf("replicas %v", d.Spec.Replicas)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
		return c.Status().Update(context.Background(), d)
	})
}
