package kro

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// externalSelector reads the label selector an externalRef collection resolved to. No selector
// selects everything, as in kro. Unknown fields are refused rather than dropped: a misspelled
// matchLabels would otherwise select every object in scope.
func externalSelector(id string, desired *unstructured.Unstructured) (labels.Selector, error) {
	raw, found, err := unstructured.NestedMap(desired.Object, "metadata", "selector")
	if err != nil || !found {
		return labels.Everything(), nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to convert selector for %s: %w", id, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ls metav1.LabelSelector
	if err := dec.Decode(&ls); err != nil {
		return nil, fmt.Errorf("failed to convert selector for %s: %w", id, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("invalid label selector for %s: %w", id, err)
	}
	return selector, nil
}
