package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// hubLogFile is where the in-process hub controller logs, inside the dev directory.
const hubLogFile = "flotilla-hub.log"

// devProbeInterval probes dev spokes often, so stopping one shows quickly in `kubectl get clusters`.
const devProbeInterval = 2 * time.Second

// startHub installs the CRDs, runs the hub controller in this process (logging to a file in
// dir) and joins every spoke with its labels. It returns when all spokes are Ready; the
// controller runs until ctx ends, and done is closed when it has stopped.
func startHub(ctx context.Context, fleet *localfleet.Fleet, dir, displayDir string, out io.Writer) (done <-chan error, err error) {
	hubCfg := fleet.Hub().RESTConfig()
	if err := install.Apply(ctx, hubCfg, nil); err != nil {
		return nil, fmt.Errorf("install CRDs: %w", err)
	}
	logFile, err := os.Create(filepath.Join(dir, hubLogFile))
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))
	finished := make(chan error, 1)
	go func() {
		defer func() { _ = logFile.Close() }()
		finished <- hub.Run(ctx, hubCfg, hub.Options{
			MetricsAddr: "0", HealthAddr: "0",
			Inventory: inventory.Options{ProbeInterval: devProbeInterval, ProbeTimeout: time.Second},
		})
	}()
	_, _ = fmt.Fprintf(out, "  hub controller running (logs: %s)\n", filepath.Join(displayDir, hubLogFile))

	hubClient, err := client.New(hubCfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		return finished, err
	}
	for _, spoke := range fleet.Spokes() {
		if err := membership.Join(ctx, hubClient, membership.JoinOptions{
			Name: spoke.Name(), Spoke: spoke.RESTConfig(), Labels: spoke.Spec().Labels,
		}); err != nil {
			return finished, fmt.Errorf("join %s: %w", spoke.Name(), err)
		}
	}
	if err := waitClustersReady(ctx, hubClient, len(fleet.Spokes())); err != nil {
		return finished, err
	}
	_, _ = fmt.Fprintf(out, "  %d spokes joined and Ready\n", len(fleet.Spokes()))
	return finished, nil
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
			if meta.IsStatusConditionPresentAndEqual(c.Status.Conditions, flotillav1.ClusterReady, metav1.ConditionTrue) && c.Status.NodeCount > 0 {
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
