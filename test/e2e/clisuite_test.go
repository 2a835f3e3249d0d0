package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestCLISuite drives the flotilla binary as a user does, against one real fleet (a hub and two
// spokes, joined with the binary): every listing command in every output format (JSON and YAML
// decoded strictly into Flotilla's types), -l and -A, --watch printing a change, the completion
// script in bash and its answers from the hub, the binary as a kubectl plugin through real
// kubectl, plan --exit-code's three statuses, and the error of a kubeconfig with no Flotilla hub.
func TestCLISuite(t *testing.T) {
	cli := startCLIFleet(t)
	mustKubectl(t, cli.hub, "apply", "-f", "testdata/cli-suite.yaml")
	for _, ns := range []string{"cli-a", "cli-b"} {
		eventuallyKubectl(t, cli.hub, "Applied 2", "get", "propagation", "cfg", "-n", ns, "-o",
			`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters}`)
	}

	t.Run("listings", cli.listings)
	t.Run("selector", func(t *testing.T) {
		cli.want(t, 0, "cluster.flotilla.dev/spoke-1\n", "get", "clusters", "-l", "region=eu-west", "-o", "name")
		cli.want(t, 0, "No clusters match the selector region=nowhere.\n", "get", "clusters", "-l", "region=nowhere")
	})
	t.Run("all-namespaces", func(t *testing.T) {
		cli.want(t, 0, "cluster.flotilla.dev/spoke-1\ncluster.flotilla.dev/spoke-2\n", "get", "clusters", "-A", "-o", "name")
		cli.want(t, 0, "cli-a/cfg\ncli-b/cfg\n", "status", "cfg", "-A", "-o", `jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}`)
	})
	t.Run("watch", cli.watch)
	t.Run("completion", cli.completion)
	t.Run("kubectl plugin", cli.kubectlPlugin)
	t.Run("plan exit codes", func(t *testing.T) {
		cli.want(t, 0, "", "plan", "cfg", "-n", "cli-a", "--exit-code")
		out := cli.want(t, 1, "", "plan", "-f", "testdata/cli-suite-change.yaml", "--exit-code")
		if !strings.Contains(out, `/data/v: "hub" → "planned"`) {
			t.Errorf("plan -f of a change does not show it:\n%s", out)
		}
		out = cli.want(t, 2, "", "plan", "nothing", "-n", "cli-a", "--exit-code")
		if !strings.Contains(out, "error: propagation nothing not found in namespace cli-a") {
			t.Errorf("plan of a missing Propagation:\n%s", out)
		}
	})
	t.Run("no hub", func(t *testing.T) {
		// A spoke is a Kubernetes API server without Flotilla's API.
		out := cli.want(t, 1, "", "get", "clusters", "--kubeconfig", cli.spoke)
		if !strings.Contains(out, "error: no Flotilla hub at https://") || !strings.Contains(out, "install Flotilla there with `flotilla install") {
			t.Errorf("flotilla get clusters against a cluster without Flotilla:\n%s", out)
		}
	})
}

// cliFleet is the fleet of TestCLISuite: the binary, the hub's and spoke-1's kubeconfigs.
type cliFleet struct {
	flotilla, hub, spoke string
	fleet                *localfleet.Fleet
}

// startCLIFleet starts the standard planes, installs Flotilla's CRDs, runs `flotilla hub` and
// joins spoke-1 and spoke-2 (regions eu-west and us-east), all with the binary.
func startCLIFleet(t *testing.T) *cliFleet {
	t.Helper()
	flotilla := buildFlotilla(t)
	fleet := fleettest.Start(t, standardPlanes()...)
	hub := fleet.Hub().KubeconfigPath()
	runFlotilla(t, flotilla, hub, "install", "--crds-only")
	runFlotillaHub(t, flotilla, hub)
	for name, region := range map[string]string{"spoke-1": "eu-west", "spoke-2": "us-east"} {
		runFlotilla(t, flotilla, hub, "join", name, "--kubeconfig", fleet.Plane(name).KubeconfigPath(), "--label", "region="+region)
	}
	return &cliFleet{flotilla: flotilla, hub: hub, spoke: fleet.Plane("spoke-1").KubeconfigPath(), fleet: fleet}
}

// run runs the binary with the hub's kubeconfig in KUBECONFIG and returns its stdout and
// stderr together, and its exit status.
func (c *cliFleet) run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.flotilla, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.hub)
	out, err := cmd.CombinedOutput()
	return string(out), exitCode(err)
}

// want runs the binary and fails the test unless it exits with code and, when output is not
// empty, prints exactly output; it returns what it printed.
func (c *cliFleet) want(t *testing.T, code int, output string, args ...string) string {
	t.Helper()
	out, got := c.run(t, args...)
	if got != code || (output != "" && out != output) {
		t.Errorf("flotilla %s: exit %d, want %d; printed\n%s", strings.Join(args, " "), got, code, out)
	}
	return out
}

// listings runs each listing command in each output format it takes.
func (c *cliFleet) listings(t *testing.T) {
	for _, l := range []struct {
		args   []string
		kind   string   // of the objects printed
		names  []string // namespace/name of each, in order
		single bool     // one object, not a List
		wide   bool     // takes -o wide
		table  string   // in the table
	}{
		{[]string{"get", "clusters"}, "Cluster", []string{"/spoke-1", "/spoke-2"}, false, true, "NAME"},
		{[]string{"get", "clusters", "spoke-2"}, "Cluster", []string{"/spoke-2"}, true, true, "spoke-2"},
		{[]string{"get", "clusters", "spoke-1", "spoke-2"}, "Cluster", []string{"/spoke-1", "/spoke-2"}, false, true, "spoke-1"},
		{[]string{"status", "cfg", "-n", "cli-a"}, "Propagation", []string{"cli-a/cfg"}, true, false, "Propagation cli-a/cfg: 1 objects, 2 clusters chosen, 2 applied"},
		{[]string{"status", "cfg", "-A"}, "Propagation", []string{"cli-a/cfg", "cli-b/cfg"}, false, false, "Propagation cli-b/cfg"},
		{[]string{"status", "placement/all", "-n", "cli-b"}, "Placement", []string{"cli-b/all"}, true, false, "spoke-1"},
	} {
		formats := []string{"", "json", "yaml", "name", "jsonpath={.kind}"}
		if l.wide {
			formats = append(formats, "wide")
		}
		for _, format := range formats {
			args := slices.Clone(l.args)
			if format != "" {
				args = append(args, "-o", format)
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				out := c.want(t, 0, "", args...)
				if err := checkListing(out, format, l.kind, l.names, l.single, l.table); err != nil {
					t.Errorf("flotilla %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			})
		}
	}
}

// checkListing checks what a listing printed in a format.
func checkListing(out, format, kind string, names []string, single bool, table string) error {
	switch format {
	case "", "wide":
		if !strings.Contains(out, table) || (format == "wide" && !strings.Contains(out, "region=")) {
			return fmt.Errorf("the table lacks %q (or the wide one the labels)", table)
		}
	case "json", "yaml":
		var got []string
		for _, item := range decodeListing(out, single) {
			var meta struct {
				Kind     string `json:"kind"`
				Metadata struct{ Namespace, Name string }
			}
			if err := json.Unmarshal(item, &meta); err != nil {
				return err
			}
			if meta.Kind != kind {
				return fmt.Errorf("an item of kind %q, want %s", meta.Kind, kind)
			}
			// Round trip: every field printed is a field of Flotilla's type, and nothing is lost.
			typed := map[string]any{"Cluster": &flotillav1.Cluster{}, "Propagation": &flotillav1.Propagation{}, "Placement": &flotillav1.Placement{}}[kind]
			if err := yaml.UnmarshalStrict(item, typed); err != nil {
				return fmt.Errorf("%s does not decode strictly into its type: %v", format, err)
			}
			again, _ := json.Marshal(typed)
			if err := sameJSON(item, again); err != nil {
				return fmt.Errorf("%s %s/%s does not round-trip: %v", kind, meta.Metadata.Namespace, meta.Metadata.Name, err)
			}
			got = append(got, meta.Metadata.Namespace+"/"+meta.Metadata.Name)
		}
		if !slices.Equal(got, names) {
			return fmt.Errorf("objects %v, want %v", got, names)
		}
	case "name":
		var want string
		for _, n := range names {
			want += strings.ToLower(kind) + ".flotilla.dev/" + n[strings.Index(n, "/")+1:] + "\n"
		}
		if out != want {
			return fmt.Errorf("want %q", want)
		}
	default: // jsonpath={.kind}
		want := kind
		if !single {
			want = "List"
		}
		if out != want {
			return fmt.Errorf("want %q", want)
		}
	}
	return nil
}

// decodeListing returns the JSON of each object a -o json or yaml printed: the one object, or
// the items of the List.
func decodeListing(out string, single bool) []json.RawMessage {
	data, err := yaml.YAMLToJSON([]byte(out)) // JSON is YAML
	if err != nil {
		return []json.RawMessage{json.RawMessage(`{"kind":"unparsable: ` + err.Error() + `"}`)}
	}
	if single {
		return []json.RawMessage{data}
	}
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil || list.Kind != "List" {
		return []json.RawMessage{json.RawMessage(`{"kind":"not a List"}`)}
	}
	return list.Items
}

// sameJSON compares two JSON documents as values.
func sameJSON(a, b []byte) error {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return err
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	if !bytes.Equal(xs, ys) {
		return fmt.Errorf("printed %s\nre-encoded %s", xs, ys)
	}
	return nil
}

// watch: get clusters -w prints a cluster again when it changes, until interrupted.
func (c *cliFleet) watch(t *testing.T) {
	var out fleettest.SyncBuffer
	cmd := exec.Command(c.flotilla, "get", "clusters", "-w", "-o", "wide")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.hub)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	fleettest.Eventually(t, 30*time.Second, "the clusters listed", func() error {
		if !strings.Contains(out.String(), "spoke-2") {
			return fmt.Errorf("printed %q", out.String())
		}
		return nil
	})
	mustKubectl(t, c.hub, "label", "cluster", "spoke-2", "tier=gold")
	fleettest.Eventually(t, 30*time.Second, "the change printed", func() error {
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "spoke-2 ") && strings.Contains(line, "tier=gold") {
				return nil
			}
		}
		return fmt.Errorf("printed %q", out.String())
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("get clusters -w after an interrupt: %v\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("get clusters -w did not stop within 15s of an interrupt")
	}
	if head := strings.Count(out.String(), "NAME "); head != 1 {
		t.Errorf("the header was printed %d times:\n%s", head, out.String())
	}
}

// completion: the bash script loads, and TAB completes from the hub.
func (c *cliFleet) completion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	script := exec.Command(bash, "-c", `source <("$FLOTILLA" completion bash) && complete -p flotilla`)
	script.Env = append(os.Environ(), "FLOTILLA="+c.flotilla)
	if out, err := script.CombinedOutput(); err != nil || !strings.Contains(string(out), "__start_flotilla") {
		t.Errorf("bash could not load `flotilla completion bash`: %v\n%s", err, out)
	}
	for args, want := range map[string]string{
		"cluster cordon spo":       "spoke-1\nspoke-2\n:4\n",
		"plan -n cli-a cm/":        "cm/settings\n:4\n",
		"status --namespace cli-":  "cli-a\ncli-b\n:4\n",
		"plan -n cli-b ":           "cfg\n:4\n",
		"get clusters --context h": "hub\n:4\n",
	} {
		words := strings.Split(args, " ")
		out, code := c.run(t, append([]string{"__complete"}, words...)...)
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("flotilla %s<TAB>: exit %d, want %q first in\n%s", args, code, want, out)
		}
	}
}

// kubectlPlugin: `kubectl flotilla get clusters` runs the binary found on PATH as
// kubectl-flotilla, with every kubectl there is (the machine's, and the one `make tools` built).
func (c *cliFleet) kubectlPlugin(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(c.flotilla, filepath.Join(dir, "kubectl-flotilla")); err != nil {
		t.Fatal(err)
	}
	kubectls := []string{fleettest.KubectlPath(t)}
	if onPath, err := exec.LookPath("kubectl"); err == nil && onPath != kubectls[0] {
		kubectls = append(kubectls, onPath)
	}
	for _, kubectlBin := range kubectls {
		for _, args := range [][]string{{"flotilla", "get", "clusters"}, {"flotilla", "get", "clusters", "-o", "name", "--kubeconfig", c.hub}} {
			cmd := exec.Command(kubectlBin, args...)
			cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+c.hub)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "spoke-1") || !strings.Contains(string(out), "spoke-2") {
				t.Errorf("%s %s: %v\n%s", kubectlBin, strings.Join(args, " "), err, out)
			}
		}
	}
}
