package revisions

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func objects(n, dataSize int, random bool) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		data := bytes.Repeat([]byte("x"), dataSize)
		if random {
			for j := range data {
				data[j] = byte('a' + rand.IntN(26))
			}
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": "team"},
			"spec":     map[string]any{"replicas": int64(3), "paused": false, "note": string(data)},
		}})
	}
	return out
}

func TestEncodeDecode(t *testing.T) {
	cases := []struct {
		name       string
		objs       []*unstructured.Unstructured
		compressed bool
	}{
		{"small, kept readable", objects(3, 10, false), false},
		{"large, compressed", objects(2000, 500, false), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := encode(c.objs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(data, []byte(`"gzip"`)); got != c.compressed {
				t.Errorf("compressed = %v, want %v (%d bytes)", got, c.compressed, len(data))
			}
			back, err := decode(data)
			if err != nil {
				t.Fatal(err)
			}
			// Integers come back as int64, as unstructured objects need them.
			if !reflect.DeepEqual(back.objs, c.objs) {
				t.Errorf("decoded objects differ from the encoded ones")
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	_, err := encode(objects(2000, 1000, true), nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestName(t *testing.T) {
	short := name(render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, "0123456789abcdef")
	if short != "propagation.web.0123456789abcdef" {
		t.Errorf("name %q", short)
	}
	long := name(render.Owner{Kind: "Propagation", Namespace: "team", Name: string(bytes.Repeat([]byte("a"), 250))}, "0123456789abcdef")
	if len(long) > 253 {
		t.Errorf("name of %d characters", len(long))
	}
}
