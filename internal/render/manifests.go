package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ParseManifests reads every YAML or JSON document of every value of data (a ConfigMap's data
// or a Secret's decoded data), in key order. Empty documents are skipped; a malformed one is
// an error naming its key and position.
func ParseManifests(source string, data map[string]string) ([]*unstructured.Unstructured, error) {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*unstructured.Unstructured
	for _, k := range keys {
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(data[k])), 4096)
		for i := 1; ; i++ {
			obj := map[string]any{}
			err := decoder.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s key %q document %d: %w", source, k, i, err)
			}
			if len(obj) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				return nil, fmt.Errorf("%s key %q document %d: apiVersion, kind and metadata.name are required", source, k, i)
			}
			out = append(out, u)
		}
	}
	return out, nil
}
