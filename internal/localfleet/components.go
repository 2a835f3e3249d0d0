package localfleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// podCIDR is where kwok takes fake Pod IPs from on every full spoke. Service networks differ by
// plane: see serviceNetworks.
const podCIDR = "10.244.0.1/16"

// Controllers the hub's kube-controller-manager runs: deletion must cascade and namespaces must
// empty out, but no workload controller may act on hub Deployments.
var hubControllers = []string{"garbage-collector-controller", "namespace-controller"}

// nodeGracePeriod is how long a full spoke's node lifecycle controller lets a fake Node go
// without a heartbeat before it marks the Node NotReady, and with it every Pod there. A fake
// Node's heartbeat comes from kwok, which on a busy 2-core machine running a dozen API servers
// can be late by more than the default 50 s; the Pods it marked stayed NotReady after the Node
// came back (kwok's stages do not restore a Pod's Ready condition), so Deployments showed 0/6
// for minutes. The controller itself stays: it also lifts the not-ready taint every new Node
// starts with, without which nothing is ever scheduled.
const nodeGracePeriod = "10m"

// component is one binary of a plane and how to run it.
type component struct {
	name string
	bin  string
	args []string
}

// components returns, in start order, what the plane runs.
func (p *Plane) components() []component {
	cs := []component{p.etcd(), p.apiServer()}
	switch {
	case p.spec.Role == RoleHub:
		cs = append(cs, p.controllerManager(strings.Join(hubControllers, ",")))
	case p.spec.Mode == ModeFull:
		cs = append(cs, p.controllerManager("*", "--node-monitor-grace-period="+nodeGracePeriod, "--node-startup-grace-period="+nodeGracePeriod), p.scheduler(), p.kwok())
	}
	return cs
}

func (p *Plane) etcd() component {
	client := "http://127.0.0.1:" + strconv.Itoa(p.ports.etcdClient)
	peer := "http://127.0.0.1:" + strconv.Itoa(p.ports.etcdPeer)
	return component{name: binEtcd, bin: binEtcd, args: append([]string{
		"--name=" + p.spec.Name,
		"--data-dir=" + filepath.Join(p.dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + p.spec.Name + "=" + peer,
		// A local, throwaway store: durability across power loss is not worth the latency.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}, p.spec.ExtraEtcdArgs...)}
}

func (p *Plane) apiServer() component {
	k := p.pki
	args := []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(p.ports.etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.ports.apiServer),
		"--cert-dir=" + k.dir,
		"--tls-cert-file=" + k.path(servingCertFile),
		"--tls-private-key-file=" + k.path(servingKeyFile),
		"--client-ca-file=" + k.path(caCertFile),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + k.path(saPubFile),
		"--service-account-signing-key-file=" + k.path(saKeyFile),
		"--service-cluster-ip-range=" + p.network.cidr,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--profiling=false",
	}
	if p.spec.AuditLog {
		args = append(args,
			"--audit-policy-file="+p.auditPolicyPath(),
			"--audit-log-path="+p.AuditLogPath(),
			"--audit-log-mode=blocking",
		)
	}
	return component{name: binAPIServer, bin: binAPIServer, args: append(args, p.spec.ExtraAPIServerArgs...)}
}

func (p *Plane) controllerManager(controllers string, extra ...string) component {
	k := p.pki
	return component{name: binControllerManager, bin: binControllerManager, args: append([]string{
		"--kubeconfig=" + p.KubeconfigPath(),
		"--controllers=" + controllers,
		// Read only with --allocate-node-cidrs; set so that no flag of the plane disagrees.
		"--service-cluster-ip-range=" + p.network.cidr,
		"--service-account-private-key-file=" + k.path(saKeyFile),
		"--root-ca-file=" + k.path(caCertFile),
		"--cluster-signing-cert-file=" + k.path(caCertFile),
		"--cluster-signing-key-file=" + k.path(caKeyFile),
		"--leader-elect=false",
		"--secure-port=0",
	}, extra...)}
}

func (p *Plane) scheduler() component {
	return component{name: binScheduler, bin: binScheduler, args: []string{
		"--kubeconfig=" + p.KubeconfigPath(),
		"--leader-elect=false",
		"--secure-port=0",
	}}
}

// kwokConfig keeps kwok from reading a configuration in the user's home directory; the node
// and pod lifecycle stages follow it (kwokStages in the binary directory). kwok v0.8 does not
// default its parallelism options when a configuration file is given, so they are set here
// (to its documented defaults).
const kwokConfig = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodePlayStageParallelism: 4
  podPlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
`

// writeKwokConfig writes kwok's configuration: its options and the stages that make fake
// Nodes Ready (and keep them so with heartbeats) and fake Pods run.
func (p *Plane) writeKwokConfig() error {
	stages, err := os.ReadFile(filepath.Join(p.binDir, kwokStages))
	if err != nil {
		return fmt.Errorf("read kwok's stages (run make tools): %w", err)
	}
	out, err := withPodReadyDelay(string(stages), p.spec.PodReadyDelay)
	if err != nil {
		return err
	}
	return os.WriteFile(p.kwokConfigPath(), []byte(kwokConfig+"---\n"+out), 0o600)
}

// podReadyStage opens the spec of kwok's stage that makes a Pod Ready.
const podReadyStage = "  name: pod-ready\nspec:\n"

// withPodReadyDelay gives kwok's pod-ready stage a delay (none when delay is 0).
func withPodReadyDelay(stages string, delay time.Duration) (string, error) {
	if delay <= 0 {
		return stages, nil
	}
	if strings.Count(stages, podReadyStage) != 1 {
		return "", fmt.Errorf("kwok's stages have no single pod-ready stage to delay (run make tools)")
	}
	return strings.Replace(stages, podReadyStage, fmt.Sprintf("%s  delay:\n    durationMilliseconds: %d\n", podReadyStage, delay.Milliseconds()), 1), nil
}

func (p *Plane) kwokConfigPath() string { return filepath.Join(p.dir, "kwok.yaml") }

func (p *Plane) kwok() component {
	return component{name: binKwok, bin: binKwok, args: []string{
		"--kubeconfig=" + p.KubeconfigPath(),
		"--config=" + p.kwokConfigPath(),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + fakeNodeAnnotation + "=fake",
		"--cidr=" + podCIDR,
		"--node-ip=127.0.0.1",
	}}
}
