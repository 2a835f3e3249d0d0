package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// podReadyDelay is how long the spokes' Pods take to become Ready: long enough that a move
// that broke before it made would show as fewer available replicas.
const podReadyDelay = 4 * time.Second

// TestMovesKeepTheWorkloadAvailable: a transparent Deployment moved by relabelling its
// clusters and by a NoExecute taint, on spokes whose real Deployment controllers start Pods
// that take seconds to become Ready. The fleet's available replicas, sampled throughout, never
// drop below spec.replicas.
func TestMovesKeepTheWorkloadAvailable(t *testing.T) {
	flotilla, fleet := startFleet(t, podReadyDelay, map[string]string{"spoke-1": "eu", "spoke-2": "eu", "spoke-3": "us"})
	hubKC := fleet.Hub().KubeconfigPath()
	mustKubectl(t, hubKC, "apply", "-f", "testdata/mover.yaml")
	s := newSampler(t, fleet, client.ObjectKey{Namespace: "shop", Name: "mover"}, "spoke-1", "spoke-2", "spoke-3")
	s.waitAvailable(map[string]int32{"spoke-1": 3, "spoke-2": 3})
	// Fewer samples than the moves' readiness delays allow for would prove nothing.
	stop := fleettest.Low(t, 100*time.Millisecond, int(2*podReadyDelay/(100*time.Millisecond)), s.fleetAvailable)

	// spoke-3 joins the region and spoke-1 leaves it: spoke-1 keeps its 3 until spoke-3's are
	// Ready.
	mustKubectl(t, hubKC, "label", "cluster", "spoke-3", "region=eu", "--overwrite")
	mustKubectl(t, hubKC, "label", "cluster", "spoke-1", "region=us", "--overwrite")
	s.waitAvailable(map[string]int32{"spoke-2": 3, "spoke-3": 3})

	// `flotilla cluster drain` (a NoExecute taint) drains spoke-2 into spoke-3, which grows
	// first; --wait returns once the Cluster counts no placements, as kubectl wait sees too.
	out := runFlotilla(t, flotilla, hubKC, "cluster", "drain", "spoke-2", "--wait", "--timeout", "3m")
	if !strings.Contains(out, "cluster/spoke-2 drained") {
		t.Fatalf("drain --wait said:\n%s", out)
	}
	mustKubectl(t, hubKC, "wait", "cluster/spoke-2", "--for=jsonpath={.status.placements}=0", "--timeout=10s")
	s.waitAvailable(map[string]int32{"spoke-3": 6})

	if low := stop(); low < 6 {
		t.Errorf("the fleet had %d available replicas at one point (%s), want never fewer than 6", low, s.lowestAt)
	}

	// Uncordoned, spoke-2 is in the region again and takes its share back.
	runFlotilla(t, flotilla, hubKC, "cluster", "uncordon", "spoke-2")
	if taints := mustKubectl(t, hubKC, "get", "cluster", "spoke-2", "-o", "jsonpath={.spec.taints}"); taints != "" {
		t.Fatalf("taints left after uncordon: %s", taints)
	}
	s.waitAvailable(map[string]int32{"spoke-2": 3, "spoke-3": 3})

	// Cordoned, spoke-1 takes no new placements; nothing moves.
	if out := runFlotilla(t, flotilla, hubKC, "cluster", "cordon", "spoke-1"); !strings.Contains(out, "cluster/spoke-1 cordoned") {
		t.Fatalf("cordon said:\n%s", out)
	}
	if got := mustKubectl(t, hubKC, "get", "cluster", "spoke-1", "-o", "jsonpath={.spec.unschedulable}"); got != "true" {
		t.Fatalf("spec.unschedulable after cordon: %q", got)
	}
}

// sampler reads one Deployment on every spoke.
type sampler struct {
	t      *testing.T
	key    client.ObjectKey
	spokes map[string]client.Client

	// last is fleetAvailable's previous reading; lowest the lowest sum it returned, and what
	// each spoke counted then (for the failure message). Only the sampling goroutine uses them.
	last     map[string]int32
	lowest   int64
	lowestAt string
}

func newSampler(t *testing.T, fleet *localfleet.Fleet, key client.ObjectKey, names ...string) *sampler {
	s := &sampler{t: t, key: key, spokes: map[string]client.Client{}}
	for _, n := range names {
		cfg := fleet.Plane(n).RESTConfig()
		cfg.Timeout = 2 * time.Second // a paused or stopped spoke fails the sample, not the test
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.spokes[n] = c
	}
	return s
}

// available returns each spoke's available replicas of the Deployment; spokes without a copy
// are absent.
func (s *sampler) available() (map[string]int32, error) {
	out := map[string]int32{}
	for name, c := range s.spokes {
		d := &appsv1.Deployment{}
		err := c.Get(context.Background(), s.key, d)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[name] = d.Status.AvailableReplicas
	}
	return out, nil
}

// waitAvailable waits until exactly these spokes have a copy, with these available replicas.
func (s *sampler) waitAvailable(want map[string]int32) {
	s.t.Helper()
	fleettest.Eventually(s.t, 3*time.Minute, fmt.Sprintf("available replicas %v", want), func() error {
		got, err := s.available()
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			return fmt.Errorf("copies on %v", got)
		}
		for name, n := range want {
			if got[name] != n {
				return fmt.Errorf("available %v", got)
			}
		}
		return nil
	})
}

// fleetAvailable sums the available replicas of the Deployment over the spokes, each spoke
// counted at the larger of this reading and the previous one. The spokes are read one after
// the other, so one reading may catch a cluster that gains replicas before it gained them and
// one that loses them after it lost them: a sum lower than the fleet ever had. Two readings in
// a row both bracket the moment between them, so within a move (each cluster's count only
// rising, or only falling) each spoke's larger count is at least what it had at that moment,
// and a sum below spec.replicas is a real dip.
func (s *sampler) fleetAvailable() (int64, error) {
	got, err := s.available()
	if err != nil {
		return 0, err
	}
	last := s.last
	s.last = got
	if last == nil {
		return 0, fmt.Errorf("a first reading only")
	}
	var sum int64
	var each []string
	for _, name := range slices.Sorted(maps.Keys(s.spokes)) {
		n := max(got[name], last[name])
		sum += int64(n)
		each = append(each, fmt.Sprintf("%s %d (read %d, before %d)", name, n, got[name], last[name]))
	}
	if s.lowestAt == "" || sum < s.lowest {
		s.lowest, s.lowestAt = sum, strings.Join(each, ", ")
	}
	return sum, nil
}
