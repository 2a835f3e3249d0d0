package devenv

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// devAPIGroups are the groups the dev spokes' grant covers whole besides what they serve at
// join: fleet APIs' (kro.run) and the group of the CRD examples/crd-everywhere.yaml delivers.
var devAPIGroups = []string{"kro.run", "example.com"}

// hubLogFile is where the in-process hub controller logs, inside the dev directory.
const hubLogFile = "flotilla-hub.log"

// devProbeInterval probes dev spokes often, so stopping one shows quickly in `kubectl get clusters`.
const devProbeInterval = 2 * time.Second

// workAddr is where the dev hub serves pull-mode agents their work: loopback, any free port
// (plain HTTP is allowed there only).
const workAddr = "127.0.0.1:0"

// startHub installs the CRDs, runs the hub controller in this process (logging to a file in
// dir) and registers every spoke with its labels: the last pullSpokes in pull mode
// (RegisterPull), and of the others all but the last with `flotilla join`, the last through a
// labelled kubeconfig Secret that the hub imports, so the dev fleet shows every way (it prints
// which is which). With pull spokes the hub also serves its work endpoint on loopback, at
// workURL. It returns when all spokes are Ready; the controller runs until ctx ends, and done
// is closed when it has stopped.
func startHub(ctx context.Context, fleet *localfleet.Fleet, dir string, up Options, out io.Writer) (done <-chan error, workURL string, err error) {
	displayDir, pullSpokes := up.Dir, up.PullSpokes
	hubCfg := fleet.Hub().RESTConfig()
	// The controller runs in this process with the hub's admin kubeconfig: that is who may
	// write Delivery records.
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		return nil, "", fmt.Errorf("install CRDs: %w", err)
	}
	if up.HubReplicas > 1 {
		finished, err := startReplicas(ctx, up.Flotilla, dir, displayDir, up.HubReplicas, out)
		if err != nil {
			return nil, "", err
		}
		return finished, "", registerSpokes(ctx, fleet, hubCfg, 0, out)
	}
	logFile, err := os.Create(filepath.Join(dir, hubLogFile))
	if err != nil {
		return nil, "", err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))
	opts := hub.Options{
		MetricsAddr: "0", HealthAddr: "0",
		Inventory: inventory.Options{ProbeInterval: devProbeInterval, ProbeTimeout: time.Second},
		// Every importer, as `flotilla hub` runs them by default.
		Sources: sources.Options{KubeconfigSecrets: true, ClusterAPI: true, ArgoCD: true, ClusterProfiles: true, PublishClusterProfiles: true},
	}
	urls := make(chan string, 1)
	if pullSpokes > 0 {
		opts.WorkAddr, opts.WorkReady = workAddr, func(url string) { urls <- url }
	}
	finished := make(chan error, 1)
	go func() {
		defer func() { _ = logFile.Close() }()
		finished <- hub.Run(ctx, hubCfg, opts)
	}()
	hubLog := filepath.Join(displayDir, hubLogFile)
	_, _ = fmt.Fprintf(out, "  hub controller running (logs: %s)\n", hubLog)
	if pullSpokes > 0 {
		select {
		case workURL = <-urls:
		case err := <-finished:
			finished <- err
			return finished, "", fmt.Errorf("hub controller stopped: %w (see %s)", err, hubLog)
		case <-time.After(time.Minute):
			return finished, "", fmt.Errorf("the hub's work endpoint did not listen within a minute (see %s)", hubLog)
		}
		_, _ = fmt.Fprintf(out, "  hub work endpoint for pull-mode agents at %s (loopback only)\n", workURL)
	}

	return finished, workURL, registerSpokes(ctx, fleet, hubCfg, pullSpokes, out)
}

// registerSpokes registers the dev fleet's spokes on the hub, the last pullSpokes in pull mode,
// and waits for them to be Ready.
func registerSpokes(ctx context.Context, fleet *localfleet.Fleet, hubCfg *rest.Config, pullSpokes int, out io.Writer) error {
	hubClient, err := client.New(hubCfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		return err
	}
	spokes := fleet.Spokes()
	push, pull := spokes[:len(spokes)-pullSpokes], spokes[len(spokes)-pullSpokes:]
	for i, spoke := range push {
		if i == len(push)-1 {
			if err := registerBySecret(ctx, hubClient, spoke); err != nil {
				return fmt.Errorf("register %s through a kubeconfig Secret: %w", spoke.Name(), err)
			}
			_, _ = fmt.Fprintf(out, "  %s registered through the kubeconfig Secret %s/%s (label %s=true), not `flotilla join`\n",
				spoke.Name(), membership.Namespace, spoke.Name(), sources.KubeconfigSecretLabel)
			continue
		}
		if err := membership.Join(ctx, hubClient, membership.JoinOptions{
			Name: spoke.Name(), Spoke: spoke.RESTConfig(), Labels: spoke.Spec().Labels, APIGroups: devAPIGroups,
		}); err != nil {
			return fmt.Errorf("join %s: %w", spoke.Name(), err)
		}
		_, _ = fmt.Fprintf(out, "  %s registered with `flotilla join --api-groups %s` (a ServiceAccount token of its own)\n",
			spoke.Name(), strings.Join(devAPIGroups, ","))
	}
	for _, spoke := range pull {
		if err := RegisterPull(ctx, hubClient, spoke.Name(), spoke.Spec().Labels, nil); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "  %s registered in pull mode (spec.mode Pull, no credentials on the hub; its agent's identity: serviceaccount %s/%s)\n",
			spoke.Name(), membership.Namespace, membership.AgentServiceAccount(spoke.Name()))
	}
	if err := waitClustersReady(ctx, hubClient, len(spokes)); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "  %d spokes registered and Ready\n", len(spokes))
	return nil
}

// registerBySecret stores the spoke's kubeconfig in a Secret the hub's kubeconfig-Secret
// importer turns into a Cluster named after it, with its labels: the way clusters registered
// for multicluster-runtime's kubeconfig provider (or kro) join a fleet.
func registerBySecret(ctx context.Context, hub client.Client, spoke *localfleet.Plane) error {
	kubeconfig, err := os.ReadFile(spoke.KubeconfigPath())
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: membership.Namespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	labels := map[string]string{sources.KubeconfigSecretLabel: "true"}
	maps.Copy(labels, spoke.Spec().Labels)
	return hub.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: spoke.Name(), Labels: labels},
		Data:       map[string][]byte{sources.KubeconfigSecretKey: kubeconfig},
	})
}

func waitClustersReady(ctx context.Context, hub client.Client, want int) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list flotillav1.ClusterList
		if err := hub.List(ctx, &list); err != nil {
			last = err.Error()
			return false, nil
		}
		ready := 0
		for _, c := range list.Items {
			// A pull cluster is Ready (reason PullMode) unprobed, so with no node count.
			if meta.IsStatusConditionPresentAndEqual(c.Status.Conditions, flotillav1.ClusterReady, metav1.ConditionTrue) && (c.Status.NodeCount > 0 || c.Pulls()) {
				ready++
			}
		}
		last = fmt.Sprintf("%d of %d clusters Ready", ready, want)
		return ready == want, nil
	})
	if err != nil {
		return fmt.Errorf("spokes not Ready on the hub: %s", last)
	}
	return nil
}
