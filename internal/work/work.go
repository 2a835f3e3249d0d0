package work

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Changes returns how objs, what one cluster runs, differ from base, the revision's objects:
// a merge patch per object that differs (of an empty object for one base lacks), and an
// omission per base object objs lack, sorted by object key. A Secret that differs is an error:
// its data never goes into a record.
func Changes(base, objs []*unstructured.Unstructured) ([]flotillav1.ObjectChange, error) {
	before := byKey(base)
	var out []flotillav1.ObjectChange
	for _, obj := range objs {
		key := render.Key(obj)
		original := []byte("{}")
		if b, ok := before[key]; ok {
			var err error
			if original, err = json.Marshal(b.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
		modified, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		patch, err := jsonpatch.CreateMergePatch(original, modified)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if string(patch) != "{}" && obj.GetKind() == "Secret" && obj.GroupVersionKind().Group == "" {
			// A record is readable where a Secret is not: a Secret that differs on a cluster
			// is never written into one (overrides and divisions never change Secrets).
			return nil, fmt.Errorf("%s: a Secret differs on the cluster; its change is not recorded", key)
		}
		if string(patch) != "{}" {
			out = append(out, flotillav1.ObjectChange{Object: key, Patch: &apiextensionsv1.JSON{Raw: patch}})
		}
	}
	after := byKey(objs)
	for key := range before {
		if _, kept := after[key]; !kept {
			out = append(out, flotillav1.ObjectChange{Object: key, Omit: true})
		}
	}
	slices.SortFunc(out, func(a, b flotillav1.ObjectChange) int { return strings.Compare(a.Object, b.Object) })
	return out, nil
}

// Apply returns what a cluster runs: base, the revision's objects, with changes applied, in
// apply order (render.Sort).
func Apply(base []*unstructured.Unstructured, changes []flotillav1.ObjectChange) ([]*unstructured.Unstructured, error) {
	byObject := make(map[string]flotillav1.ObjectChange, len(changes))
	for _, c := range changes {
		byObject[c.Object] = c
	}
	out := make([]*unstructured.Unstructured, 0, len(base)+len(changes))
	seen := map[string]bool{}
	for _, obj := range base {
		key := render.Key(obj)
		seen[key] = true
		c, changed := byObject[key]
		switch {
		case !changed:
			out = append(out, obj.DeepCopy())
		case c.Omit:
		default:
			patched, err := patch(obj.Object, c)
			if err != nil {
				return nil, err
			}
			out = append(out, patched)
		}
	}
	for _, c := range changes {
		if seen[c.Object] || c.Omit {
			continue
		}
		patched, err := patch(map[string]any{}, c)
		if err != nil {
			return nil, err
		}
		out = append(out, patched)
	}
	render.Sort(out)
	return out, nil
}

// ErrNotConfined is what Confined's errors are: changes that would make an object their
// revision lacks.
var ErrNotConfined = errors.New("the changes make objects the revision lacks")

// Confined returns an error (ErrNotConfined) when changes do more than Changes makes them do:
// change or omit base's own objects. A change of an object key base lacks is refused (Apply
// would make its patch into a whole object, and an omission of nothing is no change Changes
// writes), and so is a patch that changes its object's group, kind, namespace or name (it would
// make another object of it). Readers of changes from where others than the hub may write
// (a Delivery record) check them before Apply.
func Confined(base []*unstructured.Unstructured, changes []flotillav1.ObjectChange) error {
	before := byKey(base)
	for _, c := range changes {
		obj, ok := before[c.Object]
		if !ok {
			return fmt.Errorf("%w: a change of %s, which the revision lacks", ErrNotConfined, c.Object)
		}
		if c.Omit {
			continue
		}
		patched, err := patch(obj.Object, c)
		if err != nil {
			return err
		}
		if key := render.Key(patched); key != c.Object {
			return fmt.Errorf("%w: the change of %s makes it %s", ErrNotConfined, c.Object, key)
		}
	}
	return nil
}

func patch(obj map[string]any, c flotillav1.ObjectChange) (*unstructured.Unstructured, error) {
	original, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Object, err)
	}
	var raw []byte
	if c.Patch != nil {
		raw = c.Patch.Raw
	}
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	merged, err := jsonpatch.MergePatch(original, raw)
	if err != nil {
		return nil, fmt.Errorf("%s: apply its change: %w", c.Object, err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(merged); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Object, err)
	}
	return out, nil
}

func byKey(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := make(map[string]*unstructured.Unstructured, len(objs))
	for _, obj := range objs {
		out[render.Key(obj)] = obj
	}
	return out
}
