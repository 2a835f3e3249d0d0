package sources

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestClusterName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"prod", "prod"},
		{"prod-eu-1", "prod-eu-1"},
		{"Prod", "prod-"},
		{"proj_us-east1_prod", "proj-us-east1-prod-"},
		{"a.b.c", "a-b-c-"},
		{"___", "cluster-"},
		{strings.Repeat("x", 70), strings.Repeat("x", 56) + "-"},
	} {
		got := clusterName(tc.in)
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("clusterName(%q) = %q, not a DNS-1123 label: %v", tc.in, got, errs)
		}
		if strings.HasSuffix(tc.want, "-") {
			if !strings.HasPrefix(got, tc.want) || len(got) != len(tc.want)+6 {
				t.Errorf("clusterName(%q) = %q, want %q and a 6-character hash", tc.in, got, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("clusterName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if clusterName("a_b") == clusterName("a.b") {
		t.Error("names that differ only in stripped characters must stay apart")
	}
}

func TestCarryLabels(t *testing.T) {
	got := carryLabels(map[string]string{
		"region":                         "eu",
		"flotilla.dev/cluster-id":        "forged",
		"flotilla.dev/source":            "join",
		"argocd.argoproj.io/secret-type": "cluster",
		"bad key!":                       "x",
		"team":                           "not a valid value",
	}, func(k string) bool { return strings.HasPrefix(k, "argocd.argoproj.io/") })
	want := map[string]string{"region": "eu"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("carryLabels = %v, want %v", got, want)
	}
}
