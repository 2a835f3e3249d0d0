package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalkthroughRules checks how the walkthroughs' commands and shown output are read and
// compared (docsteps_test.go), without a fleet.
func TestWalkthroughRules(t *testing.T) {
	doc := "# Title\n\n```sh\nmake dev\n```\n\n```sh\n# a note\nkubectl --kubeconfig .flotilla/dev/hub.kubeconfig get clusters\n" +
		"# NAME   READY\n# a      True\n\n# another note\nkubectl --kubeconfig .flotilla/dev/hub.kubeconfig \\\n  get x -o \\\n  name\n" +
		"REV=$(kubectl --kubeconfig .flotilla/dev/hub.kubeconfig get y)\n```\n\n```yaml\nkind: X\n```\n"
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	steps, err := walkthroughSteps(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps, want 3: %+v", len(steps), steps)
	}
	if got := strings.Join(steps[0].want, "|"); got != "NAME   READY|a      True" {
		t.Errorf("first step's output %q", got)
	}
	if steps[1].command != "kubectl --kubeconfig .flotilla/dev/hub.kubeconfig get x -o name" || steps[1].want != nil {
		t.Errorf("joined step %+v", steps[1])
	}
	if !strings.HasSuffix(steps[1].where, ":14") {
		t.Errorf("joined step at %s, want line 14", steps[1].where)
	}
	if m := assignment.FindStringSubmatch(steps[2].command); m == nil || m[1] != "REV" {
		t.Errorf("assignment not recognised: %q", steps[2].command)
	}

	for cmd, want := range map[string]bool{
		"kubectl --kubeconfig .flotilla/dev/hub.kubeconfig get clusters":        true,
		"kubectl --kubeconfig x -n shop describe deployment cart":               true,
		"kubectl --kubeconfig x apply -f examples/propagation.yaml":             false,
		"bin/flotilla --hub-kubeconfig .flotilla/dev/hub.kubeconfig status web": true,
		"bin/flotilla --hub-kubeconfig .flotilla/dev/hub.kubeconfig unjoin web": false,
		"kill -STOP $(cat .flotilla/dev/planes/spoke-3/kube-apiserver.pid)":     false,
		"kubectl --kubeconfig .flotilla/dev/hub.kubeconfig label cluster a b=c": false,
	} {
		if got := readsOnly(cmd); got != want {
			t.Errorf("readsOnly(%q) = %v, want %v", cmd, got, want)
		}
	}

	printed := "NAME      READY   VERSION   SOURCE              AGE\n" +
		"spoke-1   True    v1.36.3                       13s\n" +
		"spoke-3   True    v1.36.3   kubeconfig-secret   9s\n"
	for _, c := range []struct {
		name string
		want []string
		ok   bool
	}{
		{"every row", []string{"NAME      READY   VERSION   SOURCE              AGE", "spoke-1   True    v1.36.3                       1s", "spoke-3   True    v1.36.3   kubeconfig-secret   1m"}, true},
		{"a blank cell shown filled", []string{"NAME      READY   VERSION   SOURCE              AGE", "spoke-1   True    v1.36.3   <none>              1s", "spoke-3   True    v1.36.3   kubeconfig-secret   1m"}, false},
		{"a row and more", []string{"NAME      READY   VERSION   SOURCE              AGE", "spoke-3   True    v1.36.3   kubeconfig-secret   1s", "..."}, true},
		{"a missing row", []string{"NAME      READY   VERSION   SOURCE              AGE", "spoke-3   True    v1.36.3   kubeconfig-secret   1s"}, false},
		{"a wrong value", []string{"NAME      READY   VERSION   SOURCE              AGE", "spoke-3   False   v1.36.3   kubeconfig-secret   1s", "..."}, false},
		{"fewer columns", []string{"NAME   READY   VERSION   AGE", "..."}, false},
		{"some columns", []string{"NAME      READY   ...", "spoke-1   True", "..."}, true},
		{"a placeholder", []string{"NAME        READY   ...", "spoke-<n>   True", "..."}, true},
		{"lines in order", []string{"spoke-1 True v1.36.3 <age>", "...", "spoke-3   True v1.36.3   kubeconfig-secret   9s"}, true},
		{"part of a line", []string{"spoke-1 True"}, false},
		{"lines out of order", []string{"spoke-3 True", "spoke-1 True"}, false},
	} {
		if err := matchOutput(c.want, printed); (err == nil) != c.ok {
			t.Errorf("%s: matchOutput = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// TestExampleCommandsNameTheirCluster: every kubectl command an example's comments suggest says
// which dev plane it talks to, so none reaches whatever cluster a reader has open.
func TestExampleCommandsNameTheirCluster(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") && strings.Contains(line, "kubectl ") && !strings.Contains(line, "--kubeconfig") {
				t.Errorf("%s:%d: a kubectl command without --kubeconfig: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
