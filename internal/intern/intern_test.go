package intern

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"
)

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestStringSharesEqualStrings(t *testing.T) {
	tab := NewTable(100, 64)
	a := tab.String(strings.Repeat("x", 10))
	b := tab.String(strings.Repeat("x", 10)) // equal, separately allocated
	if a != b || !same(a, b) {
		t.Fatal("equal strings do not share memory")
	}
	long := strings.Repeat("y", 65)
	if got := tab.String(long); !same(got, long) {
		t.Error("a string over maxLen was replaced")
	}
	if interned, added := tab.Stats(); interned != 1 || added != 1 {
		t.Errorf("stats = %d interned, %d added; want 1, 1", interned, added)
	}
}

func TestTableIsBounded(t *testing.T) {
	tab := NewTable(10, 64)
	first := tab.String(strings.Repeat("a", 3))
	for i := range 25 {
		tab.String(strings.Repeat("b", i+1))
	}
	if n := len(tab.current) + len(tab.previous); n > 20 {
		t.Fatalf("table holds %d strings, want at most 20", n)
	}
	if again := tab.String(strings.Repeat("a", 3)); same(again, first) {
		t.Error("a string forgotten two rotations ago is still shared")
	}
	// A string in the older half is promoted when used, and so survives the next rotation.
	tab = NewTable(4, 64)
	kept := tab.String("kept")
	for _, s := range []string{"1", "2", "3", "4"} {
		tab.String(s)
	}
	tab.String("kept") // found in previous: promoted
	for _, s := range []string{"5", "6", "7"} {
		tab.String(s)
	}
	if again := tab.String(strings.Clone("kept")); !same(again, kept) {
		t.Error("a promoted string was forgotten")
	}
}

func TestValueInternsKeysAndValuesOfNestedObjects(t *testing.T) {
	doc := `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"args":["web"],"name":"web"}]}}`
	var a, b map[string]any
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(doc), &b); err != nil {
		t.Fatal(err)
	}
	tab := NewTable(100, 64)
	tab.Value(a)
	tab.Value(b)
	labelA := a["metadata"].(map[string]any)["labels"].(map[string]any)["app"].(string)
	labelB := b["metadata"].(map[string]any)["labels"].(map[string]any)["app"].(string)
	argB := b["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"].([]any)[0].(string)
	if !same(labelA, labelB) || !same(labelA, argB) {
		t.Error("equal values in two decoded objects do not share memory")
	}
	for k := range b["metadata"].(map[string]any) {
		for k2 := range a["metadata"].(map[string]any) {
			if !same(k, k2) {
				t.Error("equal map keys do not share memory")
			}
		}
	}
	if out, _ := json.Marshal(b); string(out) != doc {
		t.Errorf("interning changed the object: %s", out)
	}
}
