package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// hubOutage is how long the hub's API server stays down in TestPullAgentCrashAndHubOutage (the
// issue's number).
const hubOutage = 60 * time.Second

// TestPullAgentCrashAndHubOutage runs `flotilla hub` and a pull spoke's `flotilla agent` as
// processes, and checks what pull mode promises when either goes away:
//
//   - the agent killed (SIGKILL) while it delivers 200 ConfigMaps, and started again, converges
//     exactly (every object, with its content; the Propagation counts the cluster applied);
//   - an owner deleted on the hub while the agent is down is removed by the restarted agent,
//     which remembers it on the spoke, and only after the removal grace;
//   - the hub down for 60 s (its controller, which serves the work endpoint, then its API
//     server and etcd): the agent keeps the work applied and reverts drift on the spoke, says
//     so with a HubUnreachable Event there (and HubReachable when the hub is back), and an
//     edit made on the hub as soon as its API server is back, before its controller is,
//     arrives;
//   - over the whole test the pull spoke's audit log shows no delete by the agent but the one
//     of the owner deleted on the hub, after its grace.
func TestPullAgentCrashAndHubOutage(t *testing.T) {
	const objects = 200
	const grace = 10 * time.Second
	ctx := context.Background()
	flotilla := buildFlotilla(t)
	edgeSpec := fleettest.APIOnlySpoke("edge")
	edgeSpec.AuditLog = true
	fleet := fleettest.Start(t, fleettest.Hub(), edgeSpec)
	hubPlane, edgePlane := fleet.Hub(), fleet.Plane("edge")
	hubKC, edgeKC := hubPlane.KubeconfigPath(), edgePlane.KubeconfigPath()
	hubc, edge := planeClient(t, hubPlane), planeClient(t, edgePlane)

	runFlotilla(t, flotilla, hubKC, "install", "--crds-only")
	workAddr := freeLoopbackAddr(t)
	hubArgs := []string{"hub", "--hub-kubeconfig", hubKC, "--leader-elect=false", "--metrics-bind-address=0",
		"--health-probe-bind-address=0", "--probe-interval=1s", "--work-bind-address", workAddr}
	hub := startFlotillaProcess(t, flotilla, hubArgs)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cluster.yaml"), "apiVersion: flotilla.dev/v1alpha1\nkind: Cluster\nmetadata: {name: edge}\nspec: {mode: Pull}\n")
	mustKubectl(t, hubKC, "apply", "-f", filepath.Join(dir, "cluster.yaml"))
	if _, err := membership.GrantAgent(ctx, hubc, "edge"); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, mustKubectl(t, hubKC, "create", "token", membership.AgentServiceAccount("edge"), "-n", membership.Namespace,
		"--audience", clusterwork.Audience, "--duration", "1h"))
	agentArgs := []string{"agent", "--cluster", "edge", "--hub-work-url", "http://" + workAddr, "--token-file", tokenFile,
		"--kubeconfig", edgeKC, "--poll-interval", "250ms", "--removal-grace", grace.String(), "--log-format", "text"}
	first := startFlotillaProcess(t, flotilla, agentArgs)

	// A first owner, delivered whole: it is deleted on the hub while the agent is down.
	var manifest bytes.Buffer
	manifest.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: bulk}\n---\n" +
		"apiVersion: flotilla.dev/v1alpha1\nkind: Placement\nmetadata: {name: all, namespace: bulk}\nspec: {clusterSelector: {}}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: solo, namespace: bulk}\ndata: {v: solo}\n---\n" +
		"apiVersion: flotilla.dev/v1alpha1\nkind: Propagation\nmetadata: {name: solo, namespace: bulk}\n" +
		"spec: {placementRef: {name: all}, resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: solo}]}\n")
	writeFile(t, filepath.Join(dir, "solo.yaml"), manifest.String())
	mustKubectl(t, hubKC, "apply", "-f", filepath.Join(dir, "solo.yaml"))
	solo := client.ObjectKey{Namespace: "bulk", Name: "solo"}
	fleettest.Eventually(t, 90*time.Second, "the solo ConfigMap on the pull spoke", func() error {
		return edge.Get(ctx, solo, &corev1.ConfigMap{})
	})

	// The bulk owner: the agent is killed as soon as its first objects arrive.
	manifest.Reset()
	for i := range objects {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: bulk, labels: {bulk: \"yes\"}}\ndata: {v: \"%d\"}\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "bulk.yaml"), manifest.String())
	writeFile(t, filepath.Join(dir, "propagation.yaml"), bulkPropagation)
	// The kill must land mid-delivery: a watch of the pull spoke, opened before the delivery
	// starts, says when the first object is there.
	arrivals, err := kubernetes.NewForConfigOrDie(edgePlane.RESTConfig()).CoreV1().ConfigMaps("bulk").
		Watch(ctx, metav1.ListOptions{LabelSelector: "bulk=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer arrivals.Stop()
	mustKubectl(t, hubKC, "apply", "--server-side", "-f", filepath.Join(dir, "bulk.yaml"))
	mustKubectl(t, hubKC, "apply", "-f", filepath.Join(dir, "propagation.yaml"))
	bulk := func() map[string]string {
		list := &corev1.ConfigMapList{}
		if err := edge.List(ctx, list, client.InNamespace("bulk"), client.MatchingLabels{"bulk": "yes"}); err != nil {
			return nil
		}
		out := map[string]string{}
		for _, cm := range list.Items {
			out[cm.Name] = cm.Data["v"]
		}
		return out
	}
	select {
	case ev, open := <-arrivals.ResultChan():
		if !open || ev.Type != watch.Added {
			t.Fatalf("watching the pull spoke's ConfigMaps: %v (open %v)", ev.Type, open)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("no bulk ConfigMap reached the pull spoke within 90s")
	}
	first.kill(t)
	arrivals.Stop()
	atKill := len(bulk())
	t.Logf("killed flotilla agent (SIGKILL) with %d of %d objects on the pull spoke", atKill, objects)
	if atKill == objects {
		t.Fatal("the delivery was whole before the kill: the test would prove nothing")
	}

	// While the agent is down, the solo owner is deleted on the hub: its record goes at once.
	mustKubectl(t, hubKC, "delete", "propagation", "solo", "-n", "bulk", "--wait=true")
	restarted := time.Now()
	startFlotillaProcess(t, flotilla, agentArgs)

	fleettest.Eventually(t, 90*time.Second, "exactly the bulk objects, with their content, on the pull spoke", func() error {
		got := bulk()
		if len(got) != objects {
			return fmt.Errorf("%d of %d", len(got), objects)
		}
		for i := range objects {
			if v := got[fmt.Sprintf("cm-%03d", i)]; v != fmt.Sprint(i) {
				return fmt.Errorf("cm-%03d has v=%q", i, v)
			}
		}
		return nil
	})
	t.Logf("exactly the %d objects on the pull spoke %s after the restart", objects, time.Since(restarted).Round(time.Millisecond))
	eventuallyKubectl(t, hubKC, fmt.Sprintf("Applied 1 %d", objects), "get", "propagation", "bulk", "-n", "bulk", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters} {.status.clusterResults[?(@.cluster=="edge")].applied}`)
	t.Logf("the hub counts the pull cluster applied %s after the restart", time.Since(restarted).Round(time.Millisecond))
	fleettest.Eventually(t, grace+60*time.Second, "the solo ConfigMap removed after the grace", func() error {
		if err := edge.Get(ctx, solo, &corev1.ConfigMap{}); err == nil {
			return fmt.Errorf("still there %s after the restart", time.Since(restarted).Round(time.Second))
		}
		return nil
	})
	deletes := agentDeletes(t, edgePlane)
	if len(deletes) != 1 || deletes[0].ObjectRef.Resource != "configmaps" || deletes[0].ObjectRef.Name != "solo" {
		t.Fatalf("the agent's deletes on the pull spoke: %v, want only the solo ConfigMap's", describeDeletes(deletes))
	}
	if at := deletes[0].RequestReceivedTimestamp; at.Before(restarted.Add(grace)) {
		t.Fatalf("the solo ConfigMap was deleted %s after the restart, before the grace (%s)", at.Sub(restarted), grace)
	}
	t.Logf("the owner deleted while the agent was down was removed %s after the restart (grace %s)",
		deletes[0].RequestReceivedTimestamp.Sub(restarted).Round(time.Millisecond), grace)

	// The hub goes away for the outage: its controller (which serves the work endpoint), then
	// its API server and etcd.
	hub.stop(t)
	hubPlane.Stop()
	down := time.Now()
	fleettest.Eventually(t, hubOutage, "a HubUnreachable Event on the pull spoke", func() error {
		return hasAgentEvent(t, edgeKC, agent.ReasonHubUnreachable, "Warning")
	})
	t.Logf("HubUnreachable %s after the hub went down", time.Since(down).Round(time.Millisecond))
	// Drift on the pull spoke is still reverted, by the agent.
	drifted := client.ObjectKey{Namespace: "bulk", Name: "cm-007"}
	fleettest.Eventually(t, 30*time.Second, "edit cm-007 on the pull spoke", func() error {
		cm := &corev1.ConfigMap{}
		if err := edge.Get(ctx, drifted, cm); err != nil {
			return err
		}
		cm.Data["v"] = "tampered"
		return edge.Update(ctx, cm)
	})
	fleettest.Eventually(t, 30*time.Second, "cm-007 reverted while the hub is down", func() error {
		if v := bulk()["cm-007"]; v != "7" {
			return fmt.Errorf("v=%q", v)
		}
		return nil
	})
	fleettest.Consistently(t, time.Until(down.Add(hubOutage)), "the pull spoke keeps the last work while the hub is down", func() error {
		if n := len(bulk()); n != objects {
			return fmt.Errorf("%d of %d bulk objects", n, objects)
		}
		return nil
	})
	if err := hubPlane.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("the hub's API server was down %s", time.Since(down).Round(time.Millisecond))

	// An edit made on the hub while its controller is still down arrives on the pull spoke once
	// the controller is back.
	edited := client.ObjectKey{Namespace: "bulk", Name: "cm-000"}
	fleettest.Eventually(t, 30*time.Second, "edit cm-000 on the hub", func() error {
		cm := &corev1.ConfigMap{}
		if err := hubc.Get(ctx, edited, cm); err != nil {
			return err
		}
		cm.Data["v"] = "after-the-outage"
		return hubc.Update(ctx, cm)
	})
	startFlotillaProcess(t, flotilla, hubArgs)
	back := time.Now()
	fleettest.Eventually(t, 90*time.Second, "the hub's edit on the pull spoke", func() error {
		if v := bulk()["cm-000"]; v != "after-the-outage" {
			return fmt.Errorf("v=%q", v)
		}
		return nil
	})
	t.Logf("the hub's edit arrived %s after the hub's controller started again", time.Since(back).Round(time.Millisecond))
	fleettest.Eventually(t, 30*time.Second, "a HubReachable Event on the pull spoke", func() error {
		return hasAgentEvent(t, edgeKC, agent.ReasonHubReachable, "Normal")
	})
	if out := mustKubectl(t, edgeKC, "describe", "configmap", agent.MemoryName, "-n", membership.Namespace); !strings.Contains(out, agent.ReasonHubUnreachable) {
		t.Errorf("kubectl describe of the agent's ConfigMap shows no %s Event:\n%s", agent.ReasonHubUnreachable, out)
	}
	if deletes := agentDeletes(t, edgePlane); len(deletes) != 1 {
		t.Fatalf("the agent deleted on the pull spoke across the outage: %v", describeDeletes(deletes))
	}
}

// planeClient is a client of a plane as its admin.
func planeClient(t *testing.T, p *localfleet.Plane) client.Client {
	t.Helper()
	c, err := client.New(p.RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// freeLoopbackAddr is a loopback address with a port free now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// agentDeletes are the deletes the agent made on a plane, from its audit log.
func agentDeletes(t *testing.T, p *localfleet.Plane) []localfleet.AuditEvent {
	t.Helper()
	events, err := p.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	var out []localfleet.AuditEvent
	for _, ev := range events {
		if !strings.HasPrefix(ev.UserAgent, agent.UserAgent) {
			continue
		}
		seen++
		if ev.Verb == "delete" || ev.Verb == "deletecollection" {
			out = append(out, ev)
		}
	}
	if seen == 0 {
		t.Fatal("the audit log shows no request of the agent at all: the check would prove nothing")
	}
	return out
}

func describeDeletes(events []localfleet.AuditEvent) []string {
	out := make([]string, 0, len(events))
	for _, ev := range events {
		out = append(out, fmt.Sprintf("%s %s %s/%s at %s", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name,
			ev.RequestReceivedTimestamp.Format(time.RFC3339Nano)))
	}
	return out
}

// hasAgentEvent checks that `kubectl get events` in the agent's namespace on the spoke shows an
// Event of the agent with reason and type.
func hasAgentEvent(t *testing.T, kubeconfig, reason, typ string) error {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "get", "events", "-n", membership.Namespace, "--field-selector", "reason="+reason,
		"-o", `jsonpath={range .items[*]}{.type} {.involvedObject.kind}/{.involvedObject.name}: {.message}{"\n"}{end}`)
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	if !strings.HasPrefix(out, typ+" ConfigMap/"+agent.MemoryName+": ") {
		return fmt.Errorf("no %s %s Event about the agent's ConfigMap: %q", typ, reason, out)
	}
	t.Logf("kubectl get events: %s", strings.TrimSpace(out))
	return nil
}

// flotillaProcess is a `flotilla` command (hub, agent) the test stops or kills.
type flotillaProcess struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when it ended
}

// startFlotillaProcess runs flotilla with args until stopped, killed or the test ends (then
// SIGTERM); its log is shown if the test failed.
func startFlotillaProcess(t *testing.T, flotilla string, args []string) *flotillaProcess {
	t.Helper()
	var log fleettest.SyncBuffer
	cmd := exec.Command(flotilla, args...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &flotillaProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("flotilla %s (pid %d) log:\n%s", args[0], cmd.Process.Pid, log.String())
		}
	})
	return p
}

// stop sends SIGTERM, by PID, and waits for the process to end (SIGKILL after 15s).
func (p *flotillaProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		t.Errorf("flotilla %s did not stop within 15s of SIGTERM", p.cmd.Args[1])
	}
}

// kill sends SIGKILL, by PID, and waits for the process to end.
func (p *flotillaProcess) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("flotilla did not end after SIGKILL")
	}
}
