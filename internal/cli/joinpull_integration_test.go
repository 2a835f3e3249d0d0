package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

const pullCanary = "canary-pu11-j01n-f1071lla"

// TestJoinPull joins a cluster in pull mode with the CLI against a real hub, and tries what the
// bootstrap credential it writes may do there: mint work tokens for its own agent, and nothing
// else (another agent's tokens, Secrets, Delivery records: 403). An agent started with that
// kubeconfig is served its work and delivers a Propagation's ConfigMap and Secret to its spoke;
// joined again with the spoke's kubeconfig, the credential is stored in a Secret there, and an
// agent reading it from the Secret delivers a hub edit.
// After `flotilla unjoin`, the credential, a credential renewed with it and its work tokens are
// refused within seconds, the agent's Role and RoleBinding are gone, and the spoke keeps what
// the agent delivered. No token nor the Secret's data is in the CLI's output or the agents'
// log.
func TestJoinPull(t *testing.T) {
	// The agents log here (through their context, at their most verbose). The hub controller
	// logs wherever controller-runtime's logger goes in this binary: it is set once per
	// process, and TestSecretDataStaysInside searches that log.
	var logs fleettest.SyncBuffer
	agentLog := zap.New(zap.WriteTo(&logs), zap.UseDevMode(true))
	ctx := context.Background()
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("edge"))
	hubc := hubtest.Install(t, fleet)
	urls := make(chan string, 1)
	hubtest.Run(t, fleet, func(o *hub.Options) {
		o.WorkAddr, o.WorkReady = "127.0.0.1:0", func(url string) { urls <- url }
	})
	var workURL string
	select {
	case workURL = <-urls:
	case <-time.After(time.Minute):
		t.Fatal("the work endpoint never listened")
	}
	hubKC := fleet.Hub().KubeconfigPath()
	agentKC := filepath.Join(t.TempDir(), "edge-hub.kubeconfig")
	var cliOut strings.Builder
	cli := func(args ...string) error {
		t.Helper()
		var out syncBuffer
		err := execute(ctx, nil, &out, append(args, "--hub-kubeconfig", hubKC)...)
		cliOut.WriteString(out.String())
		return err
	}

	// Join: the Pull Cluster, the agent's identity and grant, the credential in a 0600 file.
	if err := cli("join", "edge", "--mode", "pull", "--label", "site=s1", "--agent-kubeconfig", agentKC, "--hub-work-url", workURL); err != nil {
		t.Fatalf("join --mode pull: %v\n%s", err, cliOut.String())
	}
	if !strings.Contains(cliOut.String(), "flotilla agent --cluster edge --hub-work-url "+workURL+" --hub-kubeconfig edge-hub.kubeconfig") {
		t.Errorf("join did not print the agent's command line:\n%s", cliOut.String())
	}
	c := &flotillav1.Cluster{}
	if err := hubc.Get(ctx, client.ObjectKey{Name: "edge"}, c); err != nil {
		t.Fatal(err)
	}
	if !c.Pulls() || c.Labels["site"] != "s1" || c.Spec.Credentials.Name != "" {
		t.Fatalf("cluster edge: mode %q, labels %v, credentials %+v", c.Spec.Mode, c.Labels, c.Spec.Credentials)
	}
	// The API refuses switching the mode in place (kubectl edit included): unjoin and join again.
	flipped := c.DeepCopy()
	flipped.Spec.Mode = flotillav1.ClusterPush
	flipped.Spec.Credentials.Name = "edge-kubeconfig"
	if err := hubc.Update(ctx, flipped); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "unjoin") {
		t.Errorf("switching cluster edge to Push: %v, want Invalid saying to unjoin", err)
	}
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		if err := hubc.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: "agent-edge"}, obj); err != nil {
			t.Fatalf("the agent's %T: %v", obj, err)
		}
	}
	info, err := os.Stat(agentKC)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the agent's kubeconfig: %v, %v", info, err)
	}
	bootstrap := credential(t, agentKC)

	// Joining again re-issues a credential (the labels given replace the Cluster's, as in push
	// mode); joining in push mode is refused, changing nothing.
	if err := cli("join", "edge", "--mode", "pull", "--label", "site=s1", "--agent-kubeconfig", agentKC); err != nil {
		t.Fatalf("join --mode pull again: %v", err)
	}
	reissued := credential(t, agentKC)
	if reissued.BearerToken == bootstrap.BearerToken {
		t.Fatal("joining again did not issue a new credential")
	}
	if err := cli("join", "edge", "--kubeconfig", fleet.Plane("edge").KubeconfigPath()); err == nil ||
		!strings.Contains(err.Error(), "unjoin") || !strings.Contains(err.Error(), "mode Pull") {
		t.Fatalf("join in push mode of a pull cluster: %v", err)
	}

	// What the credential may do on the hub.
	if _, err := membership.GrantAgent(ctx, hubc, "other"); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(reissued)
	if err != nil {
		t.Fatal(err)
	}
	mint := func(cs kubernetes.Interface, account string, audiences ...string) (string, error) {
		tr, err := cs.CoreV1().ServiceAccounts(membership.Namespace).CreateToken(ctx, account,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return tr.Status.Token, nil
	}
	workToken, err := mint(cs, "agent-edge", clusterwork.Audience)
	if err != nil {
		t.Fatalf("the credential cannot mint its own work token: %v", err)
	}
	renewedToken, err := mint(cs, "agent-edge") // a renewed credential, as the agent requests it
	if err != nil {
		t.Fatalf("the credential cannot renew itself: %v", err)
	}
	if _, err := mint(cs, "agent-other", clusterwork.Audience); !apierrors.IsForbidden(err) {
		t.Errorf("minting another cluster's agent token: %v, want 403", err)
	}
	if _, err := cs.CoreV1().Secrets(membership.Namespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets in %s: %v, want 403", membership.Namespace, err)
	}
	if _, err := cs.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets everywhere: %v, want 403", err)
	}
	as, err := client.New(reissued, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := as.List(ctx, &flotillav1.DeliveryList{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Delivery records: %v, want 403", err)
	}
	if err := as.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: "escalate"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: membership.Namespace, Name: "agent-edge"}}}); !apierrors.IsForbidden(err) {
		t.Errorf("binding itself to cluster-admin: %v, want 403", err)
	}
	work := func(cluster, token string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, workURL+"/clusters/"+cluster+"/work", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	if code := work("edge", workToken); code != http.StatusOK {
		t.Errorf("the minted work token: %d, want 200", code)
	}
	if code := work("other", workToken); code != http.StatusForbidden {
		t.Errorf("the minted work token on another cluster's work: %d, want 403", code)
	}
	// Nor may it write another cluster's status.
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, workURL+"/clusters/other/results",
		strings.NewReader(`{"items":[{"record":"default/propagation.web.other","revision":"x","applied":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Header.Set("Authorization", "Bearer "+workToken)
	res, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("the minted work token posting another cluster's results: %d, want 403", res.StatusCode)
	}
	if code := work("edge", reissued.BearerToken); code != http.StatusUnauthorized {
		t.Errorf("the hub credential itself on the work endpoint: %d, want 401 (wrong audience)", code)
	}

	// The agent, with the kubeconfig join wrote, delivers its work.
	startAgent := func(opts agent.Options) (stop func()) {
		agentCtx, cancel := context.WithCancel(ctrl.LoggerInto(ctx, agentLog))
		done := make(chan error, 1)
		opts.Cluster, opts.WorkURL, opts.Spoke, opts.PollInterval = "edge", workURL, fleet.Plane("edge").RESTConfig(), 200*time.Millisecond
		go func() { done <- agent.Run(agentCtx, opts) }()
		stopped := false
		stop = func() {
			if stopped {
				return
			}
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent: %v", err)
			}
		}
		t.Cleanup(stop)
		return stop
	}
	stopFileAgent := startAgent(agent.Options{HubKubeconfig: agentKC})
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "sites", Namespace: "team"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"site": "s1"}}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}, Data: map[string]string{"v": "v1"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "team"}, StringData: map[string]string{"password": pullCanary}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "sites"}, ResourceSelectors: []flotillav1.ResourceSelector{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, {APIVersion: "v1", Kind: "Secret", Name: "creds"}}}},
	} {
		if err := hubc.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	spoke, err := client.New(fleet.Plane("edge").RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	delivered := func() error {
		s := &corev1.Secret{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "creds"}, s); err != nil {
			return err
		}
		if string(s.Data["password"]) != pullCanary {
			return fmt.Errorf("the Secret on the spoke has other data")
		}
		return spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "settings"}, &corev1.ConfigMap{})
	}
	start := time.Now()
	fleettest.Eventually(t, time.Minute, "the agent delivers the ConfigMap and the Secret", delivered)
	t.Logf("the agent delivered in %s", time.Since(start).Round(time.Millisecond))
	stopFileAgent()

	// Joining again with the spoke's kubeconfig stores the credential in a Secret there; an
	// agent reading it from that Secret is served the work (a hub edit arrives).
	spokeKC := fleet.Plane("edge").KubeconfigPath()
	if err := cli("join", "edge", "--mode", "pull", "--label", "site=s1", "--kubeconfig", spokeKC); err != nil {
		t.Fatalf("join --mode pull --kubeconfig: %v", err)
	}
	stored := &corev1.Secret{}
	if err := spoke.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.AgentCredentialSecret}, stored); err != nil {
		t.Fatalf("the agent's credential Secret on the spoke: %v", err)
	}
	inSecret, err := kubeconfig.Parse(stored.Data[membership.AgentCredentialKey])
	if err != nil {
		t.Fatal(err)
	}
	startAgent(agent.Options{HubKubeconfigSecret: membership.Namespace + "/" + membership.AgentCredentialSecret})
	cm := &corev1.ConfigMap{}
	if err := hubc.Get(ctx, client.ObjectKey{Namespace: "team", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "v2"
	if err := hubc.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, time.Minute, "the agent reading its credential from the spoke Secret delivers the hub's edit", func() error {
		got := &corev1.ConfigMap{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "settings"}, got); err != nil {
			return err
		}
		if got.Data["v"] != "v2" {
			return fmt.Errorf("v=%q", got.Data["v"])
		}
		return nil
	})

	// Unjoin: every token of the agent is refused within seconds; the spoke keeps its work.
	if err := cli("unjoin", "edge", "--kubeconfig", spokeKC); err != nil {
		t.Fatalf("unjoin: %v", err)
	}
	if err := spoke.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.AgentCredentialSecret}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the agent's credential Secret on the spoke after unjoin --kubeconfig: %v", err)
	}
	start = time.Now()
	for name, tok := range map[string]string{"bootstrap": bootstrap.BearerToken, "re-issued": reissued.BearerToken, "renewed": renewedToken,
		"spoke Secret's": inSecret.BearerToken} {
		cfg := rest.AnonymousClientConfig(reissued)
		cfg.BearerToken = tok
		refused, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 30*time.Second, "the "+name+" credential is refused by the hub", func() error {
			if _, err := mint(refused, "agent-edge", clusterwork.Audience); !apierrors.IsUnauthorized(err) {
				return fmt.Errorf("minting a work token: %v", err)
			}
			return nil
		})
	}
	fleettest.Eventually(t, 30*time.Second, "the work token is refused by the work endpoint", func() error {
		if code := work("edge", workToken); code != http.StatusUnauthorized {
			return fmt.Errorf("answered %d", code)
		}
		return nil
	})
	t.Logf("every token of the agent refused %s after unjoin", time.Since(start).Round(time.Millisecond))
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		if err := hubc.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: "agent-edge"}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("the agent's %T after unjoin: %v", obj, err)
		}
	}
	fleettest.Eventually(t, 30*time.Second, "the agent, refused, says it keeps the last work", func() error {
		if !strings.Contains(logs.String(), "keeping the last work applied and drift-corrected, deleting nothing") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	if err := delivered(); err != nil {
		t.Errorf("after unjoin the spoke lost the agent's work: %v", err)
	}

	for _, text := range []string{cliOut.String(), logs.String()} {
		for name, secret := range map[string]string{"bootstrap credential": bootstrap.BearerToken, "re-issued credential": reissued.BearerToken,
			"renewed credential": renewedToken, "spoke Secret's credential": inSecret.BearerToken, "work token": workToken, "Secret data": pullCanary} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s is in the CLI's output or a log line", name)
			}
		}
	}
}

// credential reads the agent's hub kubeconfig as the agent does.
func credential(t *testing.T, path string) *rest.Config {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kubeconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken == "" {
		t.Fatal("the agent's kubeconfig holds no token")
	}
	return cfg
}
