package instances

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

func instanceIn(state, namespace, name string, conditions ...any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetNamespace(namespace)
	u.SetName(name)
	status := map[string]any{"conditions": conditions}
	if state != "" {
		status["state"] = state
	}
	u.Object["status"] = status
	return u
}

func condition(typ, status, reason, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
}

func TestCountByState(t *testing.T) {
	objs := []any{
		instanceIn(kro.StateActive, "a", "ok", condition("Ready", "True", "Ready", "")),
		instanceIn(kro.StateError, "b", "broken",
			condition("InstanceManaged", "True", "Managed", ""),
			condition("ResourcesReady", "False", "NotReady", "apply failed"),
			condition("Ready", "False", "ResourcesNotReady", "resource reconciliation failed")),
		instanceIn(kro.StateInProgress, "a", "waiting", condition("ResourcesReady", "False", "NotReady", "awaiting readiness")),
		instanceIn("", "a", "new"),
		instanceIn(kro.StateDeleting, "c", "going"),
		instanceIn("SOMETHING_ELSE", "c", "odd"),
	}
	got := count(objs)
	if got.Total != 6 || got.Active != 1 || got.Error != 1 || got.InProgress != 2 || got.Deleting != 1 {
		t.Fatalf("counts %+v", got)
	}
	var names []string
	for _, n := range got.NotReady {
		names = append(names, n.Namespace+"/"+n.Name)
	}
	if want := "a/new a/waiting b/broken c/going c/odd"; strings.Join(names, " ") != want {
		t.Fatalf("not ready %v, want %s", names, want)
	}
	// The Ready condition says why, before any other.
	if b := got.NotReady[2]; b.State != kro.StateError || b.Reason != "ResourcesNotReady" || b.Message != "resource reconciliation failed" {
		t.Errorf("broken: %+v", b)
	}
	// Without one, the first condition that is not True does.
	if w := got.NotReady[1]; w.Reason != "NotReady" || w.Message != "awaiting readiness" {
		t.Errorf("waiting: %+v", w)
	}
	if n := got.NotReady[0]; n.State != kro.StateInProgress || n.Reason != "" {
		t.Errorf("new: %+v", n)
	}
}

func TestCountIsBounded(t *testing.T) {
	var objs []any
	long := strings.Repeat("é", 400)
	for i := range 20 {
		objs = append(objs, instanceIn(kro.StateError, "ns", fmt.Sprintf("i%02d", 19-i), condition("Ready", "False", "Failed", long)))
	}
	got := count(objs)
	if got.Total != 20 || got.Error != 20 || len(got.NotReady) != MaxNotReady {
		t.Fatalf("total %d, error %d, %d named", got.Total, got.Error, len(got.NotReady))
	}
	if got.NotReady[0].Name != "i00" || got.NotReady[MaxNotReady-1].Name != "i04" {
		t.Errorf("not the first by name: %+v", got.NotReady)
	}
	for _, n := range got.NotReady {
		if len(n.Message) > maxNotReadyMessage || !strings.HasSuffix(n.Message, "...") || !strings.HasPrefix(n.Message, "é") {
			t.Fatalf("message of %d bytes not cut: %q", len(n.Message), n.Message)
		}
		if strings.ContainsRune(n.Message, '\uFFFD') {
			t.Fatalf("message cut inside a rune: %q", n.Message)
		}
	}
}

func TestSummaryIgnoresStatusNoise(t *testing.T) {
	a := instanceIn(kro.StateActive, "a", "x", condition("Ready", "True", "Ready", ""))
	b := instanceIn(kro.StateActive, "a", "x", condition("Ready", "True", "Ready", "something"))
	b.Object["status"].(map[string]any)["availableReplicas"] = int64(3)
	if summarize(a) != summarize(b) {
		t.Error("an ACTIVE instance's status fields changed its summary")
	}
	c := instanceIn(kro.StateInProgress, "a", "x")
	if summarize(a) == summarize(c) {
		t.Error("a state change did not change the summary")
	}
}
