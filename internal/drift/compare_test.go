package drift

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	return m
}

func TestCompare(t *testing.T) {
	desired := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"},"annotations":{"flotilla.dev/hash":"a"}},
		"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1","resources":{"limits":{"cpu":"0.5","memory":"1Gi"}},"ports":[{"containerPort":80}]}]}},"selector":{}}}`
	cases := []struct {
		name   string
		live   string
		ignore []string
		want   []string
	}{
		{name: "as applied, with defaults and fields of others",
			live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","uid":"u","labels":{"app":"web","extra":"x"},"annotations":{"flotilla.dev/hash":"b","deployment.kubernetes.io/revision":"1"}},
				"spec":{"replicas":3,"progressDeadlineSeconds":600,"template":{"spec":{"containers":[{"name":"sidecar","image":"envoy"},{"name":"app","image":"nginx:1","imagePullPolicy":"IfNotPresent","resources":{"limits":{"cpu":"500m","memory":"1073741824"}},"ports":[{"containerPort":80,"protocol":"TCP"}]}]}}},"status":{"replicas":3}}`},
		{name: "scaled", live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
				"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1","resources":{"limits":{"cpu":"500m","memory":"1Gi"}},"ports":[{"containerPort":80}]}]}}}}`,
			want: []string{"/spec/replicas"}},
		{name: "scaled, replicas ignored", ignore: []string{"/spec/replicas"}, live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
				"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1","resources":{"limits":{"cpu":"500m","memory":"1Gi"}},"ports":[{"containerPort":80}]}]}}}}`},
		{name: "image changed and label removed", live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{}},
				"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"nginx:2","resources":{"limits":{"cpu":"500m","memory":"1Gi"}},"ports":[{"containerPort":80}]}]}}}}`,
			want: []string{"/metadata/labels/app", "/spec/template/spec/containers/0/image"}},
		{name: "container gone", live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
				"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"other","image":"nginx:1"}]}}}}`,
			want: []string{"/spec/template/spec/containers/0"}},
		{name: "type changed", live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},"spec":"x"}`,
			want: []string{"/spec"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ignore, err := ParsePointers(tc.ignore)
			if err != nil {
				t.Fatal(err)
			}
			got := Compare(obj(t, desired), obj(t, tc.live), ignore)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Compare = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompareLists(t *testing.T) {
	d := obj(t, `{"args":["a","b"],"env":[{"name":"A","value":"1"}]}`)
	if got := Compare(d, obj(t, `{"args":["a","b"],"env":[{"name":"B","value":"2"},{"name":"A","value":"1"}]}`), nil); got != nil {
		t.Fatalf("env appended by another manager is not drift, got %v", got)
	}
	if got := Compare(d, obj(t, `{"args":["a","b","c"],"env":[{"name":"A","value":"1"}]}`), nil); !reflect.DeepEqual(got, []string{"/args"}) {
		t.Fatalf("a positional list that grew is drift, got %v", got)
	}
	if got := Compare(d, obj(t, `{"args":["a","b"],"env":[{"name":"A","value":"2"}]}`), nil); !reflect.DeepEqual(got, []string{"/env/0/value"}) {
		t.Fatalf("got %v", got)
	}
}

func TestCompareBoundsPaths(t *testing.T) {
	d, l := map[string]any{}, map[string]any{}
	for i := range 50 {
		d[string(rune('a'+i%26))+string(rune('a'+i/26))] = "x"
	}
	if got := Compare(d, l, nil); len(got) != maxPaths {
		t.Fatalf("got %d paths, want %d", len(got), maxPaths)
	}
}

func TestKeepLive(t *testing.T) {
	desired := obj(t, `{"spec":{"replicas":3,"paused":true,"template":{}}}`)
	live := obj(t, `{"spec":{"replicas":7,"template":{}}}`)
	ignore, _ := ParsePointers([]string{"/spec/replicas", "/spec/paused"})
	got := KeepLive(desired, live, ignore)
	if want := obj(t, `{"spec":{"replicas":7,"template":{}}}`); !reflect.DeepEqual(got, want) {
		t.Fatalf("KeepLive = %v, want %v", got, want)
	}
	if desired["spec"].(map[string]any)["replicas"] != float64(3) {
		t.Fatal("KeepLive modified its input")
	}
}

func TestParsePointer(t *testing.T) {
	got, err := ParsePointer("/metadata/labels/app.kubernetes.io~1name/~0x")
	if err != nil || !reflect.DeepEqual(got, []string{"metadata", "labels", "app.kubernetes.io/name", "~x"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "/", "spec", "/a~2b"} {
		if _, err := ParsePointer(bad); err == nil {
			t.Errorf("ParsePointer(%q) accepted a malformed pointer", bad)
		}
	}
}

// TestSetAndGet pins what Flotilla's Set adds to the library: missing maps are created, a null
// is set (not a deleted key), and only an existing list item is set ("-" does not append).
func TestSetAndGet(t *testing.T) {
	o := obj(t, `{"spec":{"args":["a"],"template":null}}`)
	for p, v := range map[string]any{"/metadata/labels/app": "web", "/spec/template/x": int64(1), "/spec/args/0": nil, "/spec/paused": nil} {
		path, _ := ParsePointer(p)
		if err := Set(o, path, v); err != nil {
			t.Fatalf("Set(%s): %v", p, err)
		}
		if got, ok := Get(o, path); !ok || got != v {
			t.Errorf("Get(%s) = %v, %v; want %v", p, got, ok, v)
		}
	}
	for _, p := range []string{"/spec/args/-", "/spec/args/1", "/spec/args/0/x", "/metadata/labels/app/x"} {
		path, _ := ParsePointer(p)
		if err := Set(o, path, "v"); err == nil {
			t.Errorf("Set(%s) succeeded", p)
		}
	}
	if want := obj(t, `{"metadata":{"labels":{"app":"web"}},"spec":{"args":[null],"template":{"x":1},"paused":null}}`); fmt.Sprint(o) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", o, want)
	}
	if _, ok := Get(o, []string{"spec", "args", "1"}); ok {
		t.Error("Get found a list item out of range")
	}
}

func TestManager(t *testing.T) {
	at := func(s int) *metav1.Time { v := metav1.NewTime(time.Unix(int64(s), 0)); return &v }
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "flotilla", Operation: metav1.ManagedFieldsOperationApply, Time: at(30), FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(20), FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(25), FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
	}
	if got := Manager(entries, []string{"/spec/replicas"}, "flotilla"); got != "kubectl-edit (Update)" {
		t.Fatalf("Manager = %q", got)
	}
	if got := Manager(entries, []string{"/data/x"}, "flotilla"); got != "kube-controller-manager (Update status)" {
		t.Fatalf("Manager without a matching field set = %q", got)
	}
	if got := Manager(entries[:1], []string{"/spec/replicas"}, "flotilla"); got != "" {
		t.Fatalf("Manager with only self = %q", got)
	}
}
