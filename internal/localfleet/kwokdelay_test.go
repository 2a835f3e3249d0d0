package localfleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The delay lands in the pod-ready stage of kwok's own stages, and nowhere else.
func TestPodReadyDelay(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(FindBinDir(), kwokStages))
	if err != nil {
		t.Fatalf("read kwok's stages (make tools writes them): %v", err)
	}
	out, err := withPodReadyDelay(string(raw), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	delays := map[string]any{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var stage struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     struct {
				Delay map[string]any `json:"delay"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			t.Fatalf("stage does not parse: %v\n%s", err, doc)
		}
		delays[stage.Metadata.Name] = stage.Spec.Delay["durationMilliseconds"]
	}
	if got := delays["pod-ready"]; got != float64(3000) {
		t.Errorf("pod-ready delay = %v, want 3000 ms", got)
	}
	if got := delays["pod-complete"]; got != nil {
		t.Errorf("pod-complete got a delay: %v", got)
	}
	same, err := withPodReadyDelay(string(raw), 0)
	if err != nil || same != string(raw) {
		t.Errorf("no delay changed the stages (%v)", err)
	}
	if _, err := withPodReadyDelay("kind: Stage\n", time.Second); err == nil {
		t.Errorf("stages without a pod-ready stage: want an error")
	}
}
