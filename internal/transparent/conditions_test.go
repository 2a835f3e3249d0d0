package transparent

import (
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// TestOwnerConditionsFollowTheLatestPass: each object's latest pass is what the hub's
// flotilla_owners counts: a hold is Applied False and PruneBlocked True until a later pass
// succeeds, another failure is Applied False only, and a cleaned-up object is gone.
func TestOwnerConditionsFollowTheLatestPass(t *testing.T) {
	r := &Reconciler{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), recorder: record.NewFakeRecorder(10), reported: map[render.Owner]report{}}
	u := &unstructured.Unstructured{}
	cart, web := render.Owner{Kind: r.OwnerKind(), Namespace: "shop", Name: "cart"}, render.Owner{Kind: r.OwnerKind(), Namespace: "shop", Name: "web"}
	r.reportFailure(u, cart, flotillav1.ReasonPruneBlocked, "removal from 2 of the 3 clusters waits for a confirmation")
	r.reportFailure(u, web, "DeliveryFailed", "")
	if got := summary(r); got != "Applied=False/PruneBlocked PruneBlocked=True/PruneBlocked;Applied=True/Applied PruneBlocked=False/Applied" {
		t.Fatalf("conditions: %s", got)
	}
	r.reportFailure(u, cart, "DeliveryFailed", "spoke-1: refused")
	r.reportFailure(u, web, "DeliveryFailed", "")
	delete(r.reported, web) // as cleanup does once the object's copies are gone
	if got := summary(r); got != "Applied=False/DeliveryFailed PruneBlocked=False/Applied" {
		t.Fatalf("conditions after the hold ended: %s", got)
	}
	if r.MetricsKind() != "Deployment" {
		t.Fatalf("metrics kind %q", r.MetricsKind())
	}
}

// summary lists the owners' conditions as Type=Status/Reason, sorted.
func summary(r *Reconciler) string {
	var owners []string
	for _, conds := range r.OwnerConditions() {
		var parts []string
		for _, c := range conds {
			parts = append(parts, c.Type+"="+string(c.Status)+"/"+c.Reason)
		}
		owners = append(owners, strings.Join(parts, " "))
	}
	sort.Strings(owners)
	return strings.Join(owners, ";")
}
