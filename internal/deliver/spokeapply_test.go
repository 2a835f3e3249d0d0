package deliver

import "testing"

func TestResourceVersionOf(t *testing.T) {
	for raw, want := range map[string]string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"team","uid":"u","resourceVersion":"4211","annotations":{"x":"{\"resourceVersion\":\"1\"}"}},"data":{"v":"1"}}`: "4211",
		`{"kind":"ConfigMap","data":{"resourceVersion":"1"},"metadata":{"labels":{"resourceVersion":"2"},"resourceVersion":"7"}}`:                                                                 "7",
		`{"apiVersion":"v1","kind":"Status","status":"Success"}`: "",
		`not json`: "",
		``:         "",
	} {
		if got := resourceVersionOf([]byte(raw)); got != want {
			t.Errorf("resourceVersionOf(%s) = %q, want %q", raw, got, want)
		}
	}
}
