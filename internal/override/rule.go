package override

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/drift"
)

// Cluster is what a rule may look at of a cluster.
type Cluster struct {
	Name   string
	Labels map[string]string
	// Allocatable holds cpu in millicores, memory in bytes and pods as a count.
	Allocatable map[string]int64
	// Limits are the cluster's placement limits in the same units (divisions read them; rules
	// do not see them).
	Limits map[string]int64
	// Unreachable says why the cluster's Ready condition is not True ("" when it is, or when
	// the Cluster could not be read): the rollout gate passes over such a cluster; rules and
	// divisions do not see it.
	Unreachable string
}

// Rule is one compiled override.
type Rule struct {
	Name     string
	names    map[string]bool
	selector labels.Selector
	target   flotillav1.OverrideTarget
	// change returns the object's content changed by the rule.
	change func(obj map[string]any, c Cluster) (map[string]any, error)
	// err is why the rule cannot be used; it fails the clusters the rule matches.
	err error
}

// Compile compiles every rule. It never fails as a whole: a rule that does not compile
// carries its error, which Apply reports for the clusters the rule matches.
func Compile(specs []flotillav1.Override) []Rule {
	out := make([]Rule, 0, len(specs))
	for _, s := range specs {
		r := Rule{Name: s.Name, names: map[string]bool{}}
		if s.Target != nil {
			r.target = *s.Target
		}
		for _, n := range s.ClusterNames {
			r.names[n] = true
		}
		if s.ClusterSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(s.ClusterSelector)
			if err != nil {
				r.err = fmt.Errorf("clusterSelector: %w", err)
			}
			r.selector = sel
		}
		if r.err == nil && targetsSecrets(r.target) {
			r.err = errSecretTarget
		}
		if r.err == nil {
			r.change, r.err = compileChange(s)
		}
		out = append(out, r)
	}
	return out
}

func compileChange(s flotillav1.Override) (func(map[string]any, Cluster) (map[string]any, error), error) {
	switch {
	case len(s.JSONPatch) > 0:
		return jsonPatch(s.JSONPatch)
	case s.MergePatch != nil:
		return mergePatch(s.MergePatch.Raw)
	case s.CEL != nil:
		return celField(s.CEL.Path, s.CEL.Expression)
	}
	return nil, fmt.Errorf("set one of jsonPatch, mergePatch and cel")
}

// Matches reports whether the rule applies to a cluster: every cluster when it names none and
// selects none, otherwise the clusters it names or selects.
func (r *Rule) Matches(c Cluster) bool {
	if len(r.names) == 0 && r.selector == nil {
		return true
	}
	return r.names[c.Name] || (r.selector != nil && r.selector.Matches(labels.Set(c.Labels)))
}

// targets reports whether the rule applies to o; never to a Secret (secrets.go), unless it is
// one that names the Secret kind, so that its refusal is reported.
func (r *Rule) targets(o *unstructured.Unstructured) bool {
	t := r.target
	if isSecret(o) && !targetsSecrets(t) {
		return false
	}
	return (t.APIVersion == "" || t.APIVersion == o.GetAPIVersion()) &&
		(t.Kind == "" || t.Kind == o.GetKind()) &&
		(t.Name == "" || t.Name == o.GetName())
}

// Active reports whether any rule applies to the cluster; when none does, objects are
// delivered exactly as rendered.
func Active(rules []Rule, c Cluster) bool {
	for i := range rules {
		if rules[i].Matches(c) {
			return true
		}
	}
	return false
}

// Apply returns the object changed by every rule that matches the cluster and targets it,
// in order, and the names of those rules; the input is not modified. With no such rule it
// returns obj itself. An error names the rule that failed.
func Apply(rules []Rule, c Cluster, obj *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	var content map[string]any
	var applied []string
	for i := range rules {
		r := &rules[i]
		if !r.Matches(c) || !r.targets(obj) {
			continue
		}
		if r.err != nil {
			return nil, nil, fmt.Errorf("override %q: %w", r.Name, r.err)
		}
		if content == nil {
			content = obj.DeepCopy().Object
		}
		next, err := r.change(content, c)
		if err != nil {
			return nil, nil, fmt.Errorf("override %q: %w", r.Name, err)
		}
		content = next
		applied = append(applied, r.Name)
	}
	if content == nil {
		return obj, nil, nil
	}
	out := &unstructured.Unstructured{Object: content}
	if err := sameIdentity(obj, out); err != nil {
		return nil, nil, fmt.Errorf("override %q: %w", applied[len(applied)-1], err)
	}
	keepOwnership(obj, out)
	return out, applied, nil
}

// sameIdentity refuses a change of what the object is: its kind, name or namespace.
func sameIdentity(before, after *unstructured.Unstructured) error {
	if before.GetAPIVersion() != after.GetAPIVersion() || before.GetKind() != after.GetKind() ||
		before.GetName() != after.GetName() || before.GetNamespace() != after.GetNamespace() {
		return fmt.Errorf("changes apiVersion, kind, name or namespace, which overrides may not")
	}
	return nil
}

// keepOwnership puts back Flotilla's markers, which a rule must not drop.
func keepOwnership(before, after *unstructured.Unstructured) {
	l := after.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for _, k := range []string{flotillav1.LabelManagedBy, flotillav1.LabelOwner} {
		if v, ok := before.GetLabels()[k]; ok {
			l[k] = v
		}
	}
	after.SetLabels(l)
	a := after.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if v, ok := before.GetAnnotations()[flotillav1.AnnotationOwner]; ok {
		a[flotillav1.AnnotationOwner] = v
	}
	after.SetAnnotations(a)
}

// roundTrip turns content into JSON and back through fn.
func roundTrip(obj map[string]any, fn func([]byte) ([]byte, error)) (map[string]any, error) {
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	patched, err := fn(doc)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(patched, &out); err != nil {
		return nil, fmt.Errorf("result is not an object: %w", err)
	}
	return normalizeNumbers(out).(map[string]any), nil
}

// normalizeNumbers turns whole float64s (what encoding/json produces) into int64s, as the
// API server's decoder does, so hashes and comparisons see one form.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// setField sets a JSON pointer's field in content.
func setField(content map[string]any, pointer string, value any) error {
	path, err := drift.ParsePointer(pointer)
	if err != nil {
		return err
	}
	return drift.Set(content, path, value)
}
