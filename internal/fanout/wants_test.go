package fanout

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A move onto a cluster an agent delivers to (a pull cluster; every cluster of a sharded hub)
// goes ahead once the agent reports the new copy Ready in the cluster's record. The hub's own
// deliverer never has a result for such a cluster: judged by it, the move held the old
// cluster's replicas forever (a sharded soak's divided Deployment kept 3 where 2 were wanted).
func TestMoveOntoAnAgentsClusterWaitsForItsReport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFanout(ctx, fake.NewClientBuilder().WithScheme(install.Scheme()).Build())
	f.Agents = ledger.Agents{Everywhere: true}

	owner := render.Owner{Kind: "Deployment.apps", Namespace: "team", Name: "web"}
	d := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(4),
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:1"}}}}}}}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	d.SetNamespace("team")
	d.SetName("web")
	rendered, err := render.Render(d, owner)
	if err != nil {
		t.Fatal(err)
	}
	objs := []*unstructured.Unstructured{rendered}
	key := render.Key(rendered)
	in := percluster.Input{Owner: owner, Placement: &flotillav1.Placement{}, Chosen: []string{"a", "b"}, DivideByDefault: true,
		Facts:  map[string]override.Cluster{"a": {Name: "a"}, "b": {Name: "b"}},
		Latest: percluster.Revision{Digest: render.Revision(objs), Objects: objs},
		Have:   division.Replicas{key: {"a": 4}}} // a ran all 4; b joins
	replicas := func(out percluster.Outcome, c string) int64 {
		t.Helper()
		w, ok := out.Want[c]
		if !ok || len(w.Objects) != 1 {
			t.Fatalf("%s gets %+v", c, w)
		}
		n, _, _ := unstructured.NestedInt64(w.Objects[0].Object, "spec", "replicas")
		return n
	}
	records := map[string]*flotillav1.Delivery{"a": {}, "b": {}}

	out, err := f.Wants(ctx, in, records)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := replicas(out, "a"), replicas(out, "b"); a != 4 || b != 2 || out.Stalled == "" {
		t.Fatalf("b's agent reported nothing: a %d, b %d, stalled %q; want a kept at 4, b at 2, stalled", a, b, out.Stalled)
	}
	records["b"].Status = flotillav1.DeliveryStatus{Revision: out.Want["b"].Revision, Count: 1, Applied: 1, Ready: 0}
	if out, _ = f.Wants(ctx, in, records); replicas(out, "a") != 4 {
		t.Fatalf("b's copy is delivered but not Ready: a %d; want it kept at 4", replicas(out, "a"))
	}
	// The revision was delivered whole once; a later delivery of it failed (status.revision
	// stays the last complete one): not Ready now.
	records["b"].Status = flotillav1.DeliveryStatus{Revision: out.Want["b"].Revision, Count: 1, Applied: 0, Failed: 1}
	if out, _ = f.Wants(ctx, in, records); replicas(out, "a") != 4 {
		t.Fatalf("b's latest delivery failed: a %d; want it kept at 4", replicas(out, "a"))
	}
	records["b"].Status = flotillav1.DeliveryStatus{Revision: out.Want["b"].Revision, Count: 1, Applied: 1, Ready: 1}
	out, err = f.Wants(ctx, in, records)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := replicas(out, "a"), replicas(out, "b"); a != 2 || b != 2 || out.Stalled != "" {
		t.Errorf("b's agent reported its copy Ready: a %d, b %d, stalled %q; want 2/2 and nothing held", a, b, out.Stalled)
	}
}
