package fleetapi

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFingerprint(t *testing.T) {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widget := schema.GroupVersionKind{Group: "example.dev", Version: "v1", Kind: "Widget"}
	view := func(paths map[string]string) *snapshot { return &snapshot{paths: paths} }
	base := view(map[string]string{"apis/apps/v1": "/openapi/v3/apis/apps/v1?hash=A", "api/v1": "/openapi/v3/api/v1?hash=C"})
	kinds := []schema.GroupVersionKind{widget, deployment}

	withWidget := view(map[string]string{"apis/apps/v1": "/openapi/v3/apis/apps/v1?hash=A", "api/v1": "/openapi/v3/api/v1?hash=C",
		"apis/example.dev/v1": "/openapi/v3/apis/example.dev/v1?hash=W"})
	if base.fingerprint(kinds) == withWidget.fingerprint(kinds) {
		t.Error("installing a CRD the RGD uses leaves its fingerprint unchanged")
	}
	otherCore := view(map[string]string{"apis/apps/v1": "/openapi/v3/apis/apps/v1?hash=A", "api/v1": "/openapi/v3/api/v1?hash=D"})
	if base.fingerprint(kinds) != otherCore.fingerprint(kinds) {
		t.Error("a change of a group-version the RGD does not use changes its fingerprint")
	}
	if base.fingerprint([]schema.GroupVersionKind{deployment, widget}) != base.fingerprint(kinds) {
		t.Error("the fingerprint depends on the order of kinds")
	}
	if got := openAPIPath(schema.GroupVersion{Version: "v1"}); got != "api/v1" {
		t.Errorf("core path %q", got)
	}
}
