package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// seriesOf counts the exposition lines of every deliver metric that belong to a cluster (a
// histogram series has several).
func seriesOf(t *testing.T, cluster string) int {
	t.Helper()
	n := 0
	for name, c := range map[string]prometheus.Collector{
		"flotilla_spoke_writes_total": spokeWrites, "flotilla_deliveries_total": deliveries,
		"flotilla_delivery_duration_seconds": deliveryDuration, "flotilla_drift_events_total": driftEvents,
		"flotilla_verifications_total": verifications,
	} {
		text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, name)
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(string(text), `cluster="`+cluster+`"`)
	}
	return n
}

func TestARetiredWorkerReleasesItsClusterSeries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1})
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	const gone, stays = "metrics-gone", "metrics-stays"
	for _, c := range []string{gone, stays} {
		d.Submit(Job{Owner: owner, Cluster: c, Revision: "1"})
		countWrite(c, "apply", nil) // as a delivery that wrote would
		driftEvents.WithLabelValues(c).Inc()
		verifications.WithLabelValues(c).Inc()
		fleettest.Eventually(t, 10*time.Second, "delivery to "+c, func() error {
			if r, ok := d.Result(owner, c); !ok || !r.Disconnected {
				return errors.New("no result yet")
			}
			return nil
		})
	}
	if n := seriesOf(t, gone); n < 5 {
		t.Fatalf("%d series of %s before it is released, want every metric", n, gone)
	}

	d.Forget(owner, gone)
	fleettest.Eventually(t, 10*time.Second, "series of the retired worker's cluster released", func() error {
		if n := seriesOf(t, gone); n != 0 {
			return fmt.Errorf("%d series left", n)
		}
		return nil
	})
	if n := seriesOf(t, stays); n < 5 {
		t.Fatalf("%d series of %s, whose worker still delivers", n, stays)
	}

	// A cluster delivered to again records anew.
	d.Submit(Job{Owner: owner, Cluster: gone, Revision: "2"})
	fleettest.Eventually(t, 10*time.Second, "series of a cluster delivered to again", func() error {
		if n := seriesOf(t, gone); n == 0 {
			return errors.New("none")
		}
		return nil
	})
}
