package drift

import (
	"reflect"
	"testing"
)

func TestProject(t *testing.T) {
	tests := []struct {
		name, desired, stored, want string
	}{
		{name: "only the fields desired sets, with the stored values",
			desired: `{"metadata":{"name":"x","labels":{"team":"shop"}},"data":{"v":"hub"}}`,
			stored:  `{"metadata":{"name":"x","uid":"u","labels":{"team":"platform","extra":"1"}},"data":{"v":"admitted","w":"2"}}`,
			want:    `{"metadata":{"name":"x","labels":{"team":"platform"}},"data":{"v":"admitted"}}`},
		{name: "fields the server does not store are left out",
			desired: `{"stringData":{"k":"v"},"data":{"a":"b"}}`,
			stored:  `{"data":{"a":"b","k":"dg=="}}`,
			want:    `{"data":{"a":"b"}}`},
		{name: "keyed list items matched on their key, others dropped",
			desired: `{"containers":[{"name":"app","image":"nginx"},{"name":"gone","image":"x"}]}`,
			stored:  `{"containers":[{"name":"sidecar","image":"envoy"},{"name":"app","image":"mirror.example/nginx","imagePullPolicy":"Always"}]}`,
			want:    `{"containers":[{"name":"app","image":"mirror.example/nginx"}]}`},
		{name: "positional lists and changed types are taken whole",
			desired: `{"args":["a"],"spec":{"x":1}}`,
			stored:  `{"args":["a","b"],"spec":"s"}`,
			want:    `{"args":["a","b"],"spec":"s"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			desired, stored := obj(t, tc.desired), obj(t, tc.stored)
			got := Project(desired, stored)
			if want := obj(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Fatalf("Project = %v, want %v", got, want)
			}
			if Compare(got, stored, nil) != nil {
				t.Fatalf("what the server stored drifts from its own projection: %v", Compare(got, stored, nil))
			}
		})
	}
}
