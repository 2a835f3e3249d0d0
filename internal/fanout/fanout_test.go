package fanout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func newFanout(ctx context.Context, hub client.Client) *Fanout {
	return &Fanout{Hub: hub, Ledger: &ledger.Ledger{Hub: hub}, Agents: ledger.Agents{Hub: hub},
		Deliverer: deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})}
}

var web = ledger.Owner{Owner: render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}}

// A failure to read a leaving cluster's Cluster object is not "the cluster is gone": the
// cluster keeps its record and is reported, to be emptied once it can be read, instead of
// being forgotten with its objects left behind unmanaged.
func TestLeaveKeepsAClusterItCannotRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("the hub cache timed out")
		},
	}).Build()
	f := newFanout(ctx, hub)
	pass := Pass{Owner: web, Records: map[string]*flotillav1.Delivery{"eu-1": {Spec: flotillav1.DeliverySpec{Cluster: "eu-1"}}}}
	out := Outcome{Leaving: map[string]deliver.Result{}}
	f.leave(ctx, pass, &out)
	if res, ok := out.Leaving["eu-1"]; !ok || !strings.Contains(res.Message, "cannot read the Cluster") {
		t.Fatalf("leaving = %+v, want eu-1 kept with the read error", out.Leaving)
	}
}

// A cluster that left keeps the objects until they are Ready on every chosen cluster, not
// merely applied there: a move makes before it breaks. Holds and refused confirmations keep
// them too.
func TestLeaveMakesBeforeItBreaks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).
		WithObjects(&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "old"}}).Build()
	records := map[string]*flotillav1.Delivery{"old": {Spec: flotillav1.DeliverySpec{Cluster: "old"}}}
	notReady := deliver.Result{Revision: "r1", Complete: true, Applied: 2, Ready: 1, NotReady: "deployment team/web: InProgress"}
	ready := notReady
	ready.Ready = 2
	pass := Pass{Owner: web, Records: records, Chosen: []string{"new"}, Want: map[string]Want{"new": {Revision: "r1"}}}
	leave := func(f *Fanout, pass Pass, res deliver.Result) Outcome {
		out := Outcome{Results: map[string]deliver.Result{"new": res}, Leaving: map[string]deliver.Result{}}
		f.leave(ctx, pass, &out)
		return out
	}

	f := newFanout(ctx, hub)
	out := leave(f, pass, notReady)
	if !strings.Contains(out.Stalled, "stay on old") || !strings.Contains(out.Stalled, "new: deployment team/web: InProgress") {
		t.Errorf("Stalled = %q", out.Stalled)
	}
	inFlight := leave(f, pass, deliver.Result{Revision: "r0", Complete: true, Applied: 2, Ready: 2})
	if !strings.Contains(inFlight.Leaving["old"].Message, "waiting for the chosen clusters") {
		t.Errorf("with the chosen cluster at an older revision, leaving = %+v", inFlight.Leaving)
	}
	held := pass
	held.Held = "Placement team/web has not scheduled its latest change yet"
	if out := leave(f, held, ready); out.Leaving["old"].Message != "kept: "+held.Held || !slices.Equal(out.Kept, []string{"old"}) {
		t.Errorf("held: leaving = %+v, kept %v", out.Leaving, out.Kept)
	}
	refusing := pass
	refusing.Confirm = func(leaving []string) string { return "confirm " + strings.Join(leaving, ",") }
	if out := leave(f, refusing, ready); out.Refused != "confirm old" || !slices.Equal(out.Kept, []string{"old"}) {
		t.Errorf("Refused = %q, kept %v", out.Refused, out.Kept)
	}
	if _, ok := f.Deliverer.Result(web.Owner, "old"); ok {
		t.Fatalf("the removal from old was submitted before the move could break")
	}

	out = leave(f, pass, ready)
	if out.Stalled != "" {
		t.Errorf("Stalled = %q once every object is Ready", out.Stalled)
	}
	if _, waiting := out.Leaving["old"]; !waiting {
		t.Errorf("old is not being emptied: %+v", out.Leaving)
	}
	// The removal is submitted: the deliverer works on it (and finds the cluster unreachable).
	fleettest.Eventually(t, 10*time.Second, "the removal from old submitted", func() error {
		if res, _ := f.Deliverer.Result(web.Owner, "old"); res.Revision != removalRevision {
			return fmt.Errorf("result %+v", res)
		}
		return nil
	})
}

// A pass that releases at once (a served API: it does not move) empties a cluster that left
// while the chosen cluster is still delivering, where a move would wait; holds and refused
// confirmations keep it all the same.
func TestLeaveReleasesAtOnceWhenAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).
		WithObjects(&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "old"}}).Build()
	records := map[string]*flotillav1.Delivery{"old": {Spec: flotillav1.DeliverySpec{Cluster: "old"}}}
	delivering := deliver.Result{Revision: "r0", Complete: true, Applied: 1}
	pass := Pass{Owner: web, Records: records, Chosen: []string{"new"}, Want: map[string]Want{"new": {Revision: "r1"}}, ReleaseAtOnce: true}
	leave := func(f *Fanout, pass Pass) Outcome {
		out := Outcome{Results: map[string]deliver.Result{"new": delivering}, Leaving: map[string]deliver.Result{}}
		f.leave(ctx, pass, &out)
		return out
	}
	f := newFanout(ctx, hub)
	held := pass
	held.Held = "Placement team/web has not scheduled its latest change yet"
	if out := leave(f, held); !slices.Equal(out.Kept, []string{"old"}) {
		t.Errorf("held: kept %v, leaving %+v", out.Kept, out.Leaving)
	}
	refusing := pass
	refusing.Confirm = func(leaving []string) string { return "confirm " + strings.Join(leaving, ",") }
	if out := leave(f, refusing); out.Refused != "confirm old" || !slices.Equal(out.Kept, []string{"old"}) {
		t.Errorf("Refused = %q, kept %v", out.Refused, out.Kept)
	}
	if _, ok := f.Deliverer.Result(web.Owner, "old"); ok {
		t.Fatalf("the removal from old was submitted though held")
	}
	out := leave(f, pass)
	if _, removing := out.Leaving["old"]; !removing || out.Stalled != "" || len(out.Kept) > 0 {
		t.Errorf("released at once: leaving %+v, stalled %q, kept %v", out.Leaving, out.Stalled, out.Kept)
	}
	fleettest.Eventually(t, 10*time.Second, "the removal from old submitted", func() error {
		if res, _ := f.Deliverer.Result(web.Owner, "old"); res.Revision != removalRevision {
			return fmt.Errorf("result %+v", res)
		}
		return nil
	})
}
