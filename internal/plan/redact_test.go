package plan

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/drift"
)

func TestRedact(t *testing.T) {
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	lastApplied := "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		in   drift.Change
		want drift.Change
	}{
		{"changed data value", secret,
			drift.Change{Path: "/data/password", Old: "b2xk", New: "bmV3"},
			drift.Change{Path: "/data/password", Old: MaskedBefore, New: MaskedAfter}},
		{"added data value", secret,
			drift.Change{Path: "/data/token", New: "bmV3"},
			drift.Change{Path: "/data/token", New: MaskedValue}},
		{"removed stringData value", secret,
			drift.Change{Path: "/stringData/token", Old: "plain"},
			drift.Change{Path: "/stringData/token", Old: MaskedValue}},
		{"whole data map added: keys shown, values masked", secret,
			drift.Change{Path: "/data", New: map[string]any{"a": "YQ==", "b": "Yg=="}},
			drift.Change{Path: "/data", New: map[string]any{"a": MaskedValue, "b": MaskedValue}}},
		{"last-applied annotation", secret,
			drift.Change{Path: lastApplied, Old: `{"data":{"a":"YQ=="}}`, New: `{"data":{"a":"Yg=="}}`},
			drift.Change{Path: lastApplied, Old: MaskedBefore, New: MaskedAfter}},
		{"annotations map added: only last-applied masked", secret,
			drift.Change{Path: "/metadata/annotations", New: map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"}},
			drift.Change{Path: "/metadata/annotations", New: map[string]any{"kubectl.kubernetes.io/last-applied-configuration": MaskedValue, "team": "a"}}},
		{"other Secret fields shown", secret,
			drift.Change{Path: "/type", Old: "Opaque", New: "kubernetes.io/tls"},
			drift.Change{Path: "/type", Old: "Opaque", New: "kubernetes.io/tls"}},
		{"a path that does not parse is masked", secret,
			drift.Change{Path: "", Old: "x", New: "y"},
			drift.Change{Path: "", Old: MaskedBefore, New: MaskedAfter}},
		{"ConfigMap data shown", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			drift.Change{Path: "/data/mode", Old: "slow", New: "fast"},
			drift.Change{Path: "/data/mode", Old: "slow", New: "fast"}},
		{"a Secret kind of another group is not core's", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Secret"},
			drift.Change{Path: "/data/x", Old: "1", New: "2"},
			drift.Change{Path: "/data/x", Old: "1", New: "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact(tt.gvk, []drift.Change{tt.in})
			if !reflect.DeepEqual(got, []drift.Change{tt.want}) {
				t.Fatalf("redact = %#v\nwant %#v", got, []drift.Change{tt.want})
			}
		})
	}
	in := map[string]any{"a": "YQ=="}
	redact(secret, []drift.Change{{Path: "/data", New: in}})
	if in["a"] != "YQ==" {
		t.Fatal("redact changed its input")
	}
}
