package e2e

import (
	"encoding/base64"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestJoinWithTheCLI drives the fleet commands as an operator would: install the CRDs, run
// `flotilla hub` as its own process and as its own ServiceAccount, join a spoke, read the
// inventory with kubectl and with `flotilla get clusters`, deliver a Propagation (a ConfigMap
// and a Secret) and a transparent-mode Deployment, read them with `flotilla status`, `diff`
// and `plan`, then unjoin. The generated RBAC is thereby proven sufficient for every flow, and
// the Secret's value never shows up in the CLI's output or the controller's log.
func TestJoinWithTheCLI(t *testing.T) {
	flotilla := buildFlotilla(t)
	fleet := fleettest.Start(t, standardPlanes()...) // spoke-1 is joined, the others stay out
	hubKC := fleet.Hub().KubeconfigPath()
	spokeKC := fleet.Plane("spoke-1").KubeconfigPath()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(flotilla, append(args, "--hub-kubeconfig", hubKC)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("flotilla %v: %v\n%s", args, err, out)
		}
		return out
	}

	// The kustomize manifests install cleanly: CRDs, least-privilege RBAC and the Deployment
	// (which nothing runs on this hub: it has no workload controllers).
	mustKubectl(t, hubKC, "apply", "-k", "../../config/default")
	controllerKC := serviceAccountKubeconfig(t, fleet.Hub().KubeconfigPath(), "flotilla-system", "flotilla-hub")

	// Least privilege, as the API server sees it: patch but never update, and Leases only in
	// flotilla-system.
	for _, c := range []struct {
		want string
		args []string
	}{
		{"yes", []string{"update", "leases", "-n", "flotilla-system"}},
		{"no", []string{"update", "leases", "-n", "kube-node-lease"}},
		{"no", []string{"create", "leases", "-n", "kube-system"}},
		{"yes", []string{"patch", "deployments.apps", "-n", "team"}},
		{"no", []string{"update", "deployments.apps", "-n", "team"}},
		{"no", []string{"update", "propagations.flotilla.dev", "-n", "team"}},
		{"no", []string{"update", "clusters.flotilla.dev", "--subresource=status"}},
		{"yes", []string{"patch", "clusters.flotilla.dev", "--subresource=status"}},
		// Secrets are written only in flotilla-system (renewed tokens, imported clusters'
		// credentials), never elsewhere.
		{"yes", []string{"delete", "secrets", "-n", "flotilla-system"}},
		{"no", []string{"delete", "secrets", "-n", "team"}},
		{"no", []string{"patch", "secrets", "-n", "kube-system"}},
	} {
		out, _ := kubectl(t, controllerKC, append([]string{"auth", "can-i"}, c.args...)...)
		if words := strings.Fields(out); len(words) == 0 || words[len(words)-1] != c.want { // after any warning
			t.Errorf("flotilla-hub can-i %v: %q, want %s", c.args, out, c.want)
		}
	}

	out := mustRun("install")
	if !strings.Contains(out, "clusters.flotilla.dev serverside-applied and established") {
		t.Fatalf("install output:\n%s", out)
	}
	mustRun("install") // idempotent

	// The controller runs as its own ServiceAccount, so the generated RBAC is proven sufficient,
	// with leader election on as in production.
	hubLog := runFlotillaHub(t, flotilla, controllerKC, "--leader-elect=true", "--zap-log-level=debug")

	out = mustRun("join", "eu-1", "--kubeconfig", spokeKC, "--label", "region=eu-west", "--label", "env=prod")
	if !strings.Contains(out, "cluster.flotilla.dev/eu-1 joined") {
		t.Fatalf("join output:\n%s", out)
	}
	fleettest.Eventually(t, 30*time.Second, "eu-1 Ready in kubectl get clusters", func() error {
		out, err := kubectl(t, hubKC, "get", "clusters", "eu-1", "--no-headers")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		fields := strings.Fields(out)
		// NAME READY VERSION NODES CPU MEMORY AGE
		if len(fields) < 7 || fields[1] != "True" || fields[2] != localfleet.KubernetesVersion || fields[3] != "2" || fields[4] != "16" || fields[5] != "64Gi" {
			return fmt.Errorf("got %q", out)
		}
		return nil
	})

	wide := mustRun("get", "clusters", "-o", "wide")
	for _, want := range []string{"NAME", "READY", "PODS", "eu-1", "True", "Probed", "env=prod,region=eu-west"} {
		if !strings.Contains(wide, want) {
			t.Errorf("`flotilla get clusters -o wide` lacks %q:\n%s", want, wide)
		}
	}
	if yaml := mustRun("get", "clusters", "-o", "yaml"); !strings.Contains(yaml, "kind: Cluster") || !strings.Contains(yaml, "kubernetesVersion: "+localfleet.KubernetesVersion) {
		t.Errorf("`flotilla get clusters -o yaml`:\n%s", yaml)
	}
	if out, err := run("get", "clusters", "-o", "table"); err == nil || !strings.Contains(out, `--output "table": want wide, json, yaml`) {
		t.Errorf("a bad --output was not refused clearly: %v\n%s", err, out)
	}
	if out, err := run("join", "Bad_Name", "--kubeconfig", spokeKC); err == nil || !strings.Contains(out, "Bad_Name") {
		t.Errorf("an invalid cluster name was not refused clearly: %v\n%s", err, out)
	}

	deliverAsTheServiceAccount(t, hubKC, spokeKC, mustRun, hubLog)

	out = mustRun("unjoin", "eu-1")
	if !strings.Contains(out, "cluster.flotilla.dev/eu-1 deleted") {
		t.Fatalf("unjoin output:\n%s", out)
	}
	if out := mustRun("get", "clusters"); !strings.Contains(out, "No clusters joined") {
		t.Fatalf("clusters after unjoin:\n%s", out)
	}
	// The spoke's own objects are untouched.
	mustKubectl(t, spokeKC, "get", "namespace", "flotilla-system")
	if out, err := kubectl(t, spokeKC, "get", "serviceaccount", "flotilla", "-n", "flotilla-system"); err == nil {
		t.Fatalf("Flotilla's ServiceAccount survived unjoin:\n%s", out)
	}
}

// secureDemoCanary is the value of the Secret in testdata/secure-demo.yaml.
const secureDemoCanary = "canary-e2e-s3cr3t-f1071lla"

// deliverAsTheServiceAccount delivers testdata/secure-demo.yaml to the joined cluster eu-1
// while `flotilla hub` runs as flotilla-hub: the Propagation's ConfigMap and Secret arrive and
// its status says Applied; the transparent Deployment runs and the hub Deployment's status
// shows it. Then the Secret drifts on the spoke (drift Report keeps the edit), and neither
// value appears in `flotilla status`, `diff`, `plan`, hub Events or the controller's log.
func deliverAsTheServiceAccount(t *testing.T, hubKC, spokeKC string, flotilla func(args ...string) string, hubLog func() string) {
	t.Helper()
	mustKubectl(t, hubKC, "apply", "-f", "testdata/secure-demo.yaml")
	eventuallyKubectl(t, spokeKC, "fast", "get", "configmap", "settings", "-n", "secure-demo", "-o", "jsonpath={.data.mode}")
	eventuallyKubectl(t, spokeKC, base64.StdEncoding.EncodeToString([]byte(secureDemoCanary)),
		"get", "secret", "db", "-n", "secure-demo", "-o", "jsonpath={.data.password}")
	eventuallyKubectl(t, hubKC, "Applied 1", "get", "propagation", "cfg", "-n", "secure-demo", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters}`)
	eventuallyKubectl(t, spokeKC, "1", "get", "deployment", "web", "-n", "secure-demo", "-o", "jsonpath={.status.availableReplicas}")
	eventuallyKubectl(t, hubKC, "1", "get", "deployment", "web", "-n", "secure-demo", "-o", "jsonpath={.status.readyReplicas}")

	edited := secureDemoCanary + "-edited-on-the-spoke"
	mustKubectl(t, spokeKC, "patch", "secret", "db", "-n", "secure-demo", "--type=merge", "-p", `{"stringData":{"password":"`+edited+`"}}`)
	var diff string
	fleettest.Eventually(t, 30*time.Second, "flotilla diff shows the Secret changed on eu-1", func() error {
		diff = flotilla("diff", "cfg", "-n", "secure-demo")
		if !strings.Contains(diff, "~ secret secure-demo/db") || !strings.Contains(diff, "***") {
			return fmt.Errorf("output:\n%s", diff)
		}
		return nil
	})
	events := mustKubectl(t, hubKC, "get", "events", "-A", "-o", "json")
	if !strings.Contains(events, "/data/password") {
		t.Errorf("no Event names the drifted field /data/password; the check below proves little:\n%s", events)
	}
	outputs := map[string]string{
		"flotilla diff":        diff,
		"flotilla plan":        flotilla("plan", "cfg", "-n", "secure-demo"),
		"flotilla status":      flotilla("status", "cfg", "-n", "secure-demo"),
		"hub Events":           events,
		"the controller's log": hubLog(),
	}
	// A permission the role lacks shows up as a refusal the controller logs and retries.
	if log := hubLog(); strings.Contains(log, "forbidden") {
		t.Errorf("the hub refused the controller something:\n%s", log)
	}
	for what, out := range outputs {
		for _, v := range []string{secureDemoCanary, base64.StdEncoding.EncodeToString([]byte(secureDemoCanary)), base64.StdEncoding.EncodeToString([]byte(edited))} {
			if strings.Contains(out, v) {
				t.Errorf("%s shows the Secret's value %q:\n%s", what, v, out)
			}
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig for a ServiceAccount of the plane behind
// adminKubeconfig, with a token from `kubectl create token`.
func serviceAccountKubeconfig(t *testing.T, adminKubeconfig, namespace, name string) string {
	t.Helper()
	token := strings.TrimSpace(mustKubectl(t, adminKubeconfig, "create", "token", name, "-n", namespace, "--duration=1h"))
	cfg, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.ClientCertificateData, auth.ClientKeyData, auth.Token = nil, nil, token
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
