package agent

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func rgdItem(digest string) clusterwork.Item {
	rgd := &unstructured.Unstructured{}
	rgd.SetAPIVersion("kro.run/v1alpha1")
	rgd.SetKind("ResourceGraphDefinition")
	rgd.SetName("notes")
	return clusterwork.Item{Owner: flotillav1.DeliveryOwner{APIVersion: "kro.run/v1alpha1", Kind: "ResourceGraphDefinition", Name: "notes"},
		Record: "flotilla-system/rgd.notes.edge", Revision: "resourcegraphdefinition.kro.run.notes.h1", Digest: digest,
		Strategy: &flotillav1.PropagationStrategy{Deletion: flotillav1.DeletionOrphan}, Objects: []*unstructured.Unstructured{rgd}}
}

// TestBookServesRGDsThroughTheirCRD: an RGD's item becomes the job fleetAPIs makes of it (its
// CRD, never the RGD itself); removal looks for the CRD's kind and keeps the removal policy;
// an item refused on the spoke keeps the job submitted before.
func TestBookServesRGDsThroughTheirCRD(t *testing.T) {
	b := newBook("edge", time.Minute)
	owner := ownerOf(rgdItem("d1"))
	if !isFleetAPI(owner) || owner.Kind != fleetapi.OwnerKind {
		t.Fatalf("owner %v is not a fleet API", owner)
	}
	if _, _, invalid := b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{rgdItem("d1")}}, time.Unix(0, 0)); len(invalid) != 1 {
		t.Fatalf("an agent that serves no fleet API took an RGD's item: %v", invalid)
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	crd.SetName("notes.kro.run")
	refuse := false
	b.apiJob = func(o render.Owner, item clusterwork.Item) (deliver.Job, error) {
		if refuse {
			return deliver.Job{}, errors.New("SchemaNotFound")
		}
		return deliver.Job{Owner: o, Cluster: "edge", Objects: []*unstructured.Unstructured{crd}, Revision: item.Digest, Prune: true}, nil
	}
	t0 := time.Unix(1000, 0)
	submit, _, invalid := b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{rgdItem("d1")}}, t0)
	if len(submit) != 1 || len(invalid) != 0 || submit[0].Objects[0] != crd || submit[0].Revision != "d1" {
		t.Fatalf("submitted %+v, invalid %v", submit, invalid)
	}
	refuse = true
	submit, _, invalid = b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{rgdItem("d2")}}, t0)
	if len(submit) != 0 || len(invalid) != 1 || b.owners[owner].job.Revision != "d1" {
		t.Fatalf("a refused revision: submitted %d, invalid %v, job at %q", len(submit), invalid, b.owners[owner].job.Revision)
	}
	b.answer(clusterwork.Work{Cluster: "edge"}, t0)
	remove := b.unchanged(t0.Add(time.Minute))
	if len(remove) != 1 {
		t.Fatalf("removals %v", remove)
	}
	if r := remove[0]; len(r.PruneKinds) != 1 || r.PruneKinds[0].Kind != "CustomResourceDefinition" || r.Strategy.Deletion != flotillav1.DeletionOrphan {
		t.Errorf("removal %+v", r)
	}
}

// TestRefusedAPIsAreRetried: a refused item is reported by record and planned again every
// apiRetryInterval, not more often; none refused, none retried.
func TestRefusedAPIsAreRetried(t *testing.T) {
	f := &fleetAPIs{refused: map[render.Owner]clusterwork.Result{}}
	now := time.Unix(1000, 0)
	if f.retryDue(now) {
		t.Error("retried with nothing refused")
	}
	f.refused[render.Owner{Kind: fleetapi.OwnerKind, Name: "notes"}] = clusterwork.Result{Record: "r", Revision: "d2", Reason: "SchemaNotFound"}
	if !f.retryDue(now) || f.retryDue(now.Add(apiRetryInterval-time.Millisecond)) || !f.retryDue(now.Add(apiRetryInterval)) {
		t.Error("not retried every apiRetryInterval")
	}
	if r := f.refusals()["r"]; r.Reason != "SchemaNotFound" || r.Revision != "d2" {
		t.Errorf("refusals %+v", f.refusals())
	}
	a := &Agent{sent: map[string]clusterwork.Result{}}
	if got := a.unsentRefusals(f.refusals()); len(got) != 1 {
		t.Errorf("unsent %v", got)
	}
	a.sent["r"] = f.refusals()["r"]
	if got := a.unsentRefusals(f.refusals()); len(got) != 0 {
		t.Errorf("posted again: %v", got)
	}
}
