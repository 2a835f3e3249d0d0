package ledger

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestOwnerOf(t *testing.T) {
	for _, c := range []struct {
		owner flotillav1.DeliveryOwner
		want  render.Owner
	}{
		{flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Namespace: "team", Name: "web"}, render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}},
		{flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "ClusterPropagation", Name: "base"}, render.Owner{Kind: "ClusterPropagation", Name: "base"}},
		{flotillav1.DeliveryOwner{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "cart"}, render.Owner{Kind: "Deployment.apps", Namespace: "shop", Name: "cart"}},
		{flotillav1.DeliveryOwner{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, render.Owner{Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}},
	} {
		if got := OwnerOf(c.owner); got != c.want {
			t.Errorf("OwnerOf(%+v) = %+v, want %+v", c.owner, got, c.want)
		}
	}
}
