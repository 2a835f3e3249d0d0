package propagation

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

type noClusters struct{}

func (noClusters) Get(context.Context, multicluster.ClusterName) (cluster.Cluster, error) {
	return nil, multicluster.ErrClusterNotFound
}

// A failure to read a dropped cluster's Cluster object is not "the cluster is gone": the
// cluster keeps its record and stays in the status, to be emptied once it can be read, instead of being forgotten
// with its objects left behind unmanaged.
func TestHandleDroppedKeepsAClusterItCannotRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("the hub cache timed out")
		},
	}).Build()
	r := &Reconciler{Hub: hub, Deliverer: deliver.New(ctx, noClusters{}, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})}
	p := fromPropagation(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}})
	records := map[string]*flotillav1.Delivery{"eu-1": {Spec: flotillav1.DeliverySpec{Cluster: "eu-1"}}}
	in := statusInput{records: records}
	r.handleDropped(ctx, p, &in, 50)
	res, ok := in.dropped["eu-1"]
	if !ok || !strings.Contains(res.Message, "cannot read the Cluster") {
		t.Fatalf("dropped = %+v, want eu-1 kept with the read error", in.dropped)
	}
}

func TestFleetBudget(t *testing.T) {
	p := fromPropagation(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}})
	cases := []struct {
		name    string
		leaving []string
		touched int
		budget  int
		held    bool
	}{
		{"one of three clusters leaves", []string{"a"}, 3, 50, false},
		{"shrinking from three clusters to one", []string{"a", "b"}, 3, 50, true},
		{"a move from one cluster to another", []string{"a"}, 2, 50, false},
		{"ten clusters to one", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, 10, 50, true},
		{"budget 0: any cluster leaving waits", []string{"a"}, 10, 0, true},
		{"nothing leaves", nil, 3, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := fleetBudget(p, c.leaving, c.touched, c.budget, "")
			if (msg != "") != c.held {
				t.Fatalf("fleetBudget = %q, want held=%v", msg, c.held)
			}
			if !c.held {
				return
			}
			token := msg[strings.LastIndex(msg, "=")+1:]
			if again := fleetBudget(p, c.leaving, c.touched, c.budget, token); again != "" {
				t.Errorf("confirmed with %q and still held: %s", token, again)
			}
			if other := fleetBudget(p, append([]string{"z"}, c.leaving...), c.touched+1, c.budget, token); other == "" {
				t.Errorf("a confirmation of one removal lifted another")
			}
		})
	}
}

// A cluster that left the placement keeps the objects until they are Ready on every chosen
// cluster, not merely applied there: a move makes before it breaks.
func TestHandleDroppedWaitsForReadiness(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).
		WithObjects(&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "old"}}).Build()
	r := &Reconciler{Hub: hub, Deliverer: deliver.New(ctx, noClusters{}, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})}
	p := fromPropagation(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}})
	records := map[string]*flotillav1.Delivery{"old": {Spec: flotillav1.DeliverySpec{Cluster: "old"}}}
	notReady := deliver.Result{Revision: "r1", Complete: true, Applied: 2, Ready: 1, NotReady: "deployment team/web: InProgress"}

	in := statusInput{revision: "r1", targets: []string{"new"}, records: records, results: map[string]deliver.Result{"new": notReady}}
	r.handleDropped(ctx, p, &in, 50)
	if !strings.Contains(in.moveStalled, "stay on old") || !strings.Contains(in.moveStalled, "new: deployment team/web: InProgress") {
		t.Errorf("moveStalled = %q", in.moveStalled)
	}
	if _, ok := r.Deliverer.Result(p.owner(), "old"); ok {
		t.Errorf("the removal from old was submitted before the objects were Ready on new")
	}
	if got := computeStatus(in); !strings.Contains(got.Conditions[0].Message, "until they are Ready") || got.Conditions[0].Reason != flotillav1.ReasonMoveStalled {
		t.Errorf("Applied condition %+v", got.Conditions[0])
	}

	ready := notReady
	ready.Ready = 2
	in = statusInput{revision: "r1", targets: []string{"new"}, records: records, results: map[string]deliver.Result{"new": ready}}
	r.handleDropped(ctx, p, &in, 50)
	if in.moveStalled != "" {
		t.Errorf("moveStalled = %q once every object is Ready", in.moveStalled)
	}
	if _, waiting := in.dropped["old"]; !waiting {
		t.Errorf("old is not being emptied: %+v", in.dropped)
	}
}
