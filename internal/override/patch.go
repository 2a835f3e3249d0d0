package override

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func jsonPatch(ops []flotillav1.JSONPatchOperation) (func(map[string]any, Cluster) (map[string]any, error), error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("jsonPatch: %w", err)
	}
	return func(obj map[string]any, _ Cluster) (map[string]any, error) {
		out, err := roundTrip(obj, func(doc []byte) ([]byte, error) { return patch.Apply(doc) })
		if err != nil {
			return nil, fmt.Errorf("jsonPatch: %w", err)
		}
		return out, nil
	}, nil
}

func mergePatch(raw []byte) (func(map[string]any, Cluster) (map[string]any, error), error) {
	var probe map[string]any
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("mergePatch must be a JSON object: %w", err)
	}
	return func(obj map[string]any, _ Cluster) (map[string]any, error) {
		out, err := roundTrip(obj, func(doc []byte) ([]byte, error) { return jsonpatch.MergePatch(doc, raw) })
		if err != nil {
			return nil, fmt.Errorf("mergePatch: %w", err)
		}
		return out, nil
	}, nil
}
