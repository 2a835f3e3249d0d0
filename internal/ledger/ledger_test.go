package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func configMap(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func TestKey(t *testing.T) {
	l := &Ledger{}
	cases := []struct {
		owner    render.Owner
		cluster  string
		wantName string
		wantNS   string
	}{
		{render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, "eu-1", "propagation.web.eu-1", "team"},
		{render.Owner{Kind: "ClusterPropagation", Name: "base"}, "eu-1", "clusterpropagation.base.eu-1", "flotilla-system"},
		{render.Owner{Kind: "Deployment.apps", Namespace: "shop", Name: "cart"}, "us", "deployment.apps.cart.us", "shop"},
		// Too long together: a hash, still a valid name.
		{render.Owner{Kind: "Propagation", Namespace: "team", Name: strings.Repeat("a", 200)}, strings.Repeat("c", 60), "", "team"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		key := l.Key(c.owner, c.cluster)
		if errs := validation.IsDNS1123Subdomain(key.Name); len(errs) > 0 {
			t.Errorf("%v on %s: invalid name %q: %v", c.owner, c.cluster, key.Name, errs)
		}
		if c.wantName != "" && key.Name != c.wantName {
			t.Errorf("%v on %s: name %q, want %q", c.owner, c.cluster, key.Name, c.wantName)
		}
		if key.Namespace != c.wantNS {
			t.Errorf("%v on %s: namespace %q, want %q", c.owner, c.cluster, key.Namespace, c.wantNS)
		}
		if seen[key.Name] {
			t.Errorf("name %q given twice", key.Name)
		}
		seen[key.Name] = true
	}
}

func TestStatusOf(t *testing.T) {
	objs := []*unstructured.Unstructured{configMap("b", "y"), configMap("a", "z"), configMap("a", "x")}
	prev := flotillav1.DeliveryStatus{Revision: "r1"}

	inFlight := StatusOf(prev, deliver.Result{Revision: "r2", Applied: 1, Failed: 2, Message: "boom"}, objs)
	if inFlight.Revision != "r1" || inFlight.Applied != 1 || inFlight.Failed != 2 || inFlight.Message != "boom" || inFlight.Count != 3 {
		t.Errorf("a delivery in flight: %+v", inFlight)
	}
	if len(inFlight.Objects) != 2 || inFlight.Objects[0].Namespace != "a" || strings.Join(inFlight.Objects[0].Names, ",") != "x,z" ||
		inFlight.Objects[0].Kind != "/v1/ConfigMap" || inFlight.Objects[1].Namespace != "b" {
		t.Errorf("objects grouped as %+v", inFlight.Objects)
	}
	done := StatusOf(prev, deliver.Result{Revision: "r2", Complete: true, Applied: 3, Ready: 3}, objs)
	if done.Revision != "r2" || done.Ready != 3 || done.Message != "" {
		t.Errorf("a complete delivery: %+v", done)
	}
	held := StatusOf(prev, deliver.Result{Revision: "r2", Applied: 3, PruneBlocked: "2 deletions wait"}, objs)
	if held.Message != "2 deletions wait" {
		t.Errorf("a held prune: %+v", held)
	}
	long := StatusOf(prev, deliver.Result{Message: strings.Repeat("é", 600)}, objs)
	if n := len([]rune(long.Message)); n != maxMessage {
		t.Errorf("message of %d characters, want %d", n, maxMessage)
	}
}

// A record of an owner with ten thousand objects stays far below etcd's 1.5 MiB request limit.
func TestRecordSizeAtTenThousandObjects(t *testing.T) {
	objs := make([]*unstructured.Unstructured, 0, 10000)
	for i := range 10000 {
		objs = append(objs, configMap(fmt.Sprintf("team-%d", i%10), fmt.Sprintf("app-config-%05d", i)))
	}
	st := StatusOf(flotillav1.DeliveryStatus{}, deliver.Result{Revision: strings.Repeat("f", 64), Complete: true, Applied: 10000, Ready: 10000}, objs)
	rec := flotillav1.Delivery{Spec: flotillav1.DeliverySpec{Cluster: "eu-1", Kinds: []string{"/v1/ConfigMap"}}, Status: st}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("record of 10000 objects: %d bytes", len(data))
	if len(data) > 512*1024 {
		t.Errorf("record of 10000 objects is %d bytes, want at most 512 KiB (a third of etcd's limit)", len(data))
	}
}

func TestUnion(t *testing.T) {
	if got := strings.Join(union([]string{"b", "a"}, []string{"c", "a"}), ","); got != "a,b,c" {
		t.Errorf("union = %s", got)
	}
}

// A result complete at one revision, replaced before it is written by one still delivering the
// next, leaves the record at the revision completed, not the one before both.
func TestReportKeepsTheLatestCompleteRevision(t *testing.T) {
	l := &Ledger{}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	p := pair{owner, "eu-1"}
	read := flotillav1.DeliveryStatus{Revision: "r0"} // what both callers read from the cache
	l.Report(owner, "eu-1", read, deliver.Result{Revision: "r1", Complete: true}, nil)
	next := report{prev: read, res: deliver.Result{Revision: "r2", Message: "applying"}}
	l.Report(owner, "eu-1", next.prev, next.res, nil)
	if got := l.statusOf(p, next).Revision; got != "r1" {
		t.Fatalf("revision written %q, want r1", got)
	}

	// A record removed forgets it: a record made again starts from what it says.
	l.Hub = fake.NewClientBuilder().WithScheme(install.Scheme()).Build()
	if err := l.Remove(context.Background(), owner, "eu-1"); err != nil {
		t.Fatal(err)
	}
	if got := l.statusOf(p, next).Revision; got != "r0" {
		t.Fatalf("revision written after the record was removed %q, want r0", got)
	}
}
