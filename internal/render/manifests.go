package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ParseManifests reads every YAML or JSON document of every value of data (a ConfigMap's data
// or a Secret's decoded data), in key order. Empty documents are skipped; a malformed one is
// a *ManifestError naming its key and position.
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
				return nil, &ManifestError{Source: source, Key: k, Document: i, Err: err}
			}
			if len(obj) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				return nil, &ManifestError{Source: source, Key: k, Document: i, Reason: "apiVersion, kind and metadata.name are required"}
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// ManifestError is a manifest document that cannot be read: where it is, and why.
type ManifestError struct {
	// Source names where the manifests are kept, e.g. "ConfigMap addons".
	Source   string
	Key      string
	Document int
	// Err is the YAML or JSON decoder's error, which may quote the document; Reason is
	// Flotilla's own, which never does. One of them is set.
	Err    error
	Reason string
}

func (e *ManifestError) Error() string {
	return e.where() + e.why(e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

// Redacted is the error for a source whose data is secret: the decoder's message, which can
// quote the document (`cannot decode !!str `+"`...`"+` as a !!int`), is replaced by its line
// number.
func (e *ManifestError) Redacted() string {
	if e.Err == nil {
		return e.Error()
	}
	msg := "not valid YAML or JSON"
	if m := decoderLine.FindStringSubmatch(e.Err.Error()); m != nil {
		msg += " at line " + m[1]
	}
	return e.where() + e.why(errors.New(msg+" (the parser's message is withheld: it may quote the Secret's data)"))
}

func (e *ManifestError) where() string {
	return fmt.Sprintf("%s key %q document %d: ", e.Source, e.Key, e.Document)
}

func (e *ManifestError) why(err error) string {
	if err != nil {
		return err.Error()
	}
	return e.Reason
}

// decoderLine finds the line number in a YAML decoder's error.
var decoderLine = regexp.MustCompile(`\bline (\d+)\b`)
