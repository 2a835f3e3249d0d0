package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// declaredChanges is testdata/upgrade/changes.yaml.
type declaredChanges struct {
	From    string `json:"from"`
	Changes []struct {
		Object string `json:"object"`
		Path   string `json:"path"`
		Why    string `json:"why"`
	} `json:"changes"`
}

// change is one difference between two renders: a field of an object (path "" for an object
// added or removed).
type change struct{ object, path, was, is string }

// TestUpgradeFromPreviousRelease compares the current chart's default render with the kept
// render of the previous release: every difference must be declared in changes.yaml, every
// declared change must happen, the chart's version must move when anything changed, and the
// changes an upgrade cannot make (a Deployment's immutable selector, a CRD version that stored
// objects or clients may still use) are refused even when declared.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	dir := filepath.Join("testdata", "upgrade")
	var declared declaredChanges
	data, err := os.ReadFile(filepath.Join(dir, "changes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &declared); err != nil {
		t.Fatalf("changes.yaml: %v", err)
	}
	previous, err := os.ReadFile(filepath.Join(dir, "from-"+declared.From+".yaml"))
	if err != nil {
		t.Fatalf("changes.yaml says the previous release is %s, whose render is not kept: %v", declared.From, err)
	}
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	current, err := Render(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	was := byName(t, decodeAll(t, previous))
	changes := diff(was, byName(t, current.Objects))

	for _, ch := range changes {
		if ch.path == "" && ch.was != "" {
			if o := was[ch.object]; o.GetKind() == "Namespace" || o.GetKind() == "CustomResourceDefinition" {
				t.Errorf("%s is no longer rendered: helm would delete it, and every object in it", ch.object)
			}
		}
		if strings.HasPrefix(ch.object, "Deployment ") && strings.HasPrefix(ch.path, "spec.selector") {
			t.Errorf("%s %s changes (%s -> %s): a Deployment's selector is immutable, the upgrade would fail", ch.object, ch.path, ch.was, ch.is)
		}
		if strings.HasPrefix(ch.object, "CustomResourceDefinition ") && isVersionName(ch.path) && ch.was != "" {
			t.Errorf("%s drops or renames version %s: stored objects and clients of it break", ch.object, ch.was)
		}
	}
	used := make([]bool, len(declared.Changes))
	for _, ch := range changes {
		ok := false
		for i, d := range declared.Changes {
			if d.Object == ch.object && (d.Path == "" || ch.path == d.Path || strings.HasPrefix(ch.path, d.Path+".") || strings.HasPrefix(ch.path, d.Path+"[")) {
				ok, used[i] = true, true
			}
		}
		if !ok {
			t.Errorf("undeclared change from %s: %s %s: %s -> %s (declare it in testdata/upgrade/changes.yaml, or undo it)",
				declared.From, ch.object, ch.path, ch.was, ch.is)
		}
	}
	for i, d := range declared.Changes {
		if !used[i] {
			t.Errorf("changes.yaml declares %s %s, which does not change: remove it", d.Object, d.Path)
		}
	}
	if len(changes) > 0 && c.Metadata.Version == declared.From {
		t.Errorf("the chart renders %d changes from release %s but its version is still %s: bump version in Chart.yaml", len(changes), declared.From, declared.From)
	}
}

// isVersionName says whether path is the name of one of a CRD's versions.
func isVersionName(path string) bool {
	return versionName.MatchString(path)
}

// versionName is the path of a CRD version's name (not of a field further in, a printer
// column's name, say).
var versionName = regexp.MustCompile(`^spec\.versions\[[0-9]+\]\.name$`)

func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		o := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			t.Fatal(err)
		}
		if len(o.Object) > 0 {
			out = append(out, o)
		}
	}
	return out
}

func byName(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		name := o.GetKind() + " " + o.GetName()
		if o.GetNamespace() != "" {
			name = o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
		}
		if out[name] != nil {
			t.Fatalf("%s is rendered twice", name)
		}
		out[name] = o
	}
	return out
}

// diff lists the objects added and removed and, for the others, every leaf field that differs.
func diff(was, is map[string]*unstructured.Unstructured) []change {
	var out []change
	for name, o := range was {
		if is[name] == nil {
			out = append(out, change{object: name, was: "present", is: "absent"})
			continue
		}
		leaves(name, "", o.Object, is[name].Object, &out)
	}
	for name := range is {
		if was[name] == nil {
			out = append(out, change{object: name, is: "present"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].object+out[i].path < out[j].object+out[j].path })
	return out
}

func leaves(object, path string, a, b any, out *[]change) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			leaves(object, p, am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok {
		for i := range max(len(as), len(bs)) {
			var x, y any
			if i < len(as) {
				x = as[i]
			}
			if i < len(bs) {
				y = bs[i]
			}
			leaves(object, fmt.Sprintf("%s[%d]", path, i), x, y, out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, change{object: object, path: path, was: show(a), is: show(b)})
	}
}

func show(v any) string {
	if v == nil {
		return "(none)"
	}
	return fmt.Sprint(v)
}
