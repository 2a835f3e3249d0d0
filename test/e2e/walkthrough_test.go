package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// walkthroughs are the documents whose walkthroughs TestWalkthroughs runs, in the order a reader
// meets them: the README first, then each document it sends the reader to. Each must work after
// the ones before it.
var walkthroughs = []string{"README.md", "docs/fleet-apis.md", "docs/scheduling.md", "docs/keeping-the-fleet-true.md", "docs/rollouts.md"}

// convergeWithin is how long a read-only command of a walkthrough may take to show what the text
// shows: the fleet converges in seconds, failover in under a minute, on a busy machine too.
const convergeWithin = 2 * time.Minute

// TestWalkthroughs does what a new user does on a fresh clone: `make dev` (flotilla dev up, from
// a directory laid out like the repository), then every command of the README's and the docs'
// walkthroughs as written, checking the output the text shows (docsteps_test.go says how). The
// commands run with a KUBECONFIG that leads nowhere, so one that forgets --kubeconfig fails here
// instead of reaching whatever cluster a reader has open. Then Ctrl-C stops every process, a
// file the user left in .flotilla/dev stays, and the next `make dev` starts there.
func TestWalkthroughs(t *testing.T) {
	root := checkoutLike(t)
	dev := startDevUp(t, root)
	dev.waitReady(t)
	devDir := filepath.Join(root, ".flotilla", "dev")

	t.Run("dev up prints what the README shows", func(t *testing.T) {
		want := shownDevUpOutput(t, "../../README.md")
		// The lines after "ready:" may still be on their way through the pipe.
		fleettest.Eventually(t, 10*time.Second, "dev up prints README.md's `make dev` sample", func() error {
			if err := matchDigitsAside(want, dev.output()); err != nil {
				return fmt.Errorf("%v\ndev up printed:\n%s", err, dev.output())
			}
			return nil
		})
	})
	t.Run("a second dev up on the same directory is refused", func(t *testing.T) {
		second := exec.Command(filepath.Join(root, "bin", "flotilla"), "dev", "up")
		second.Dir = root
		out, err := second.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "in use by another `flotilla dev up`") {
			t.Fatalf("not refused clearly: %v\n%s", err, out)
		}
	})
	pids := planePIDs(t, devDir)
	if len(pids) != 3+3*5 { // hub: etcd, apiserver, kcm; spokes: etcd, apiserver, kcm, scheduler, kwok
		t.Fatalf("found %d component PIDs, want 18: %v", len(pids), pids)
	}
	// A walkthrough pauses a spoke; whatever happens, nothing stays stopped.
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})

	env := map[string]string{}
	for _, doc := range walkthroughs {
		if !t.Run(doc, func(t *testing.T) { runWalkthrough(t, root, doc, env) }) {
			t.FailNow() // the next walkthroughs start where this one should have ended
		}
	}
	t.Run("dev up's suggestions", func(t *testing.T) {
		for _, line := range strings.Split(dev.output(), "\n") {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "kubectl ") {
				if out, err := runShell(root, line, env); err != nil {
					t.Errorf("%q: %v\n%s", line, err, out)
				}
			}
		}
	})

	userFile := filepath.Join(devDir, "notes.txt")
	if err := os.WriteFile(userFile, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	dev.interrupt(t)
	for name, pid := range pids {
		if localfleet.ProcessAlive(pid) {
			t.Errorf("%s (pid %d) still running after dev up stopped", name, pid)
		}
	}
	if data, err := os.ReadFile(userFile); err != nil || string(data) != "mine" {
		t.Fatalf("the user's file is gone or changed: %q %v", data, err)
	}
	if kubeconfigs, _ := filepath.Glob(filepath.Join(devDir, "*.kubeconfig")); len(kubeconfigs) != 0 {
		t.Errorf("dev up left %v", kubeconfigs)
	}

	// The next `make dev` starts in the directory that holds the user's file (a small fleet:
	// what matters here is that it starts), its one spoke in pull mode as the README shows.
	again := startDevUp(t, root, "--spokes", "1", "--nodes", "1", "--pull-spokes", "1")
	again.waitReady(t)
	t.Run("a pull spoke as the README shows", func(t *testing.T) { checkPullSpoke(t, root, again) })
	againPIDs := planePIDs(t, devDir)
	if _, ok := againPIDs[filepath.Join("planes", "spoke-1", "flotilla-agent.pid")]; !ok {
		t.Errorf("no PID file of the pull spoke's agent: %v", againPIDs)
	}
	again.interrupt(t)
	for name, pid := range againPIDs {
		if localfleet.ProcessAlive(pid) {
			t.Errorf("%s (pid %d) still running after dev up stopped", name, pid)
		}
	}
	if _, err := os.Stat(userFile); err != nil {
		t.Errorf("the user's file is gone after the second run: %v", err)
	}
}

// checkPullSpoke checks a dev up with --pull-spokes against the README: it prints what the
// README's pull-mode sample shows; the pull spoke is Ready on the hub with reason PullMode; and
// examples/propagation.yaml (region=eu-west, the one dev spoke here) reaches it through its
// agent, counted on the hub.
func checkPullSpoke(t *testing.T, root string, dev *devUp) {
	want := shownSample(t, "../../README.md", "With a pull spoke, dev up also prints:")
	fleettest.Eventually(t, 10*time.Second, "dev up prints README.md's pull-mode sample", func() error {
		if err := matchDigitsAside(want, dev.output()); err != nil {
			return fmt.Errorf("%v\ndev up printed:\n%s", err, dev.output())
		}
		return nil
	})
	hub := "kubectl --kubeconfig .flotilla/dev/hub.kubeconfig "
	shows := func(what, command, want string) {
		t.Helper()
		fleettest.Eventually(t, convergeWithin, what, func() error {
			out, err := runShell(root, command, nil)
			if err != nil || strings.TrimSpace(out) != want {
				return fmt.Errorf("%s: %v %q, want %q", command, err, out, want)
			}
			return nil
		})
	}
	shows("the pull spoke is Ready with reason PullMode",
		hub+`get cluster spoke-1 -o jsonpath='{.spec.mode} {.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'`,
		"Pull True PullMode")
	if out, err := runShell(root, hub+"apply -f examples/propagation.yaml", nil); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	shows("the agent delivered the Deployment", "kubectl --kubeconfig .flotilla/dev/spoke-1.kubeconfig get deployment web -n web-demo -o jsonpath='{.status.availableReplicas}'", "2")
	shows("the hub counts the pull spoke applied", hub+"get propagation web -n web-demo -o jsonpath='{.status.appliedClusters}/{.status.targetClusters}'", "1/1")
}

// checkoutLike lays a temporary directory out as the repository is where a reader runs the
// commands: bin/ (the Kubernetes binaries and a flotilla built now), examples/, and room for
// .flotilla/dev.
func checkoutLike(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(binDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "flotilla" {
			continue
		}
		if err := os.Symlink(filepath.Join(binDir(), e.Name()), filepath.Join(bin, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyFile(buildFlotilla(t), filepath.Join(bin, "flotilla")); err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(examples, filepath.Join(root, "examples")); err != nil {
		t.Fatal(err)
	}
	return root
}

// runWalkthrough runs the steps of one document's walkthrough from root.
func runWalkthrough(t *testing.T, root, doc string, env map[string]string) {
	steps, err := walkthroughSteps(filepath.Join("../..", doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) == 0 {
		t.Fatalf("%s has no walkthrough", doc)
	}
	for _, s := range steps {
		// Output the text shows as $NAME is the value an earlier NAME=$(...) kept.
		for i := range s.want {
			s.want[i] = os.Expand(s.want[i], func(name string) string { return env[name] })
		}
		command, assign := s.command, ""
		if m := assignment.FindStringSubmatch(command); m != nil {
			assign, command = m[1], m[2]
		}
		if !readsOnly(command) {
			out, err := runShell(root, command, env)
			if err == nil {
				err = matchOutput(s.want, out)
			}
			if err != nil {
				t.Fatalf("%s: %s\n%v\nit printed:\n%s", s.where, s.command, err, out)
			}
			if assign != "" {
				env[assign] = strings.TrimSpace(out)
			}
			continue
		}
		var out string
		fleettest.Eventually(t, convergeWithin, fmt.Sprintf("%s: %s shows what the text shows", s.where, s.command), func() error {
			var err error
			if out, err = runShell(root, command, env); err != nil {
				return fmt.Errorf("%v\n%s", err, out)
			}
			if assign != "" && strings.TrimSpace(out) == "" {
				return fmt.Errorf("no output to keep in %s", assign)
			}
			if err := matchOutput(s.want, out); err != nil {
				return fmt.Errorf("%v\nit printed:\n%s", err, out)
			}
			return nil
		})
		if assign != "" {
			env[assign] = strings.TrimSpace(out)
		}
	}
}

// runShell runs a command line as a reader's shell does, from root, with the variables kept so
// far, bin/ first on the PATH, and a KUBECONFIG that leads nowhere.
func runShell(root, command string, vars map[string]string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"),
		"KUBECONFIG="+filepath.Join(root, "no-such-kubeconfig"))
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// shownDevUpOutput is the sample of dev up's output the README shows after "You will see".
func shownDevUpOutput(t *testing.T, readme string) []string {
	t.Helper()
	return shownSample(t, readme, "You will see:")
}

// shownSample is the ``` block of readme right after the paragraph that ends with intro.
func shownSample(t *testing.T, readme, intro string) []string {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), intro+"\n\n```\n")
	sample, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatalf("%s shows no sample after %q", readme, intro)
	}
	return strings.Split(strings.TrimSpace(sample), "\n")
}

var digits = regexp.MustCompile(`[0-9]+`)

// matchDigitsAside is matchLines with every number counted as the same (times, ports).
func matchDigitsAside(want []string, got string) error {
	w := make([]string, len(want))
	for i, l := range want {
		w[i] = strings.ReplaceAll(digits.ReplaceAllString(l, "9"), "<", "‹") // no placeholders here
	}
	return matchLines(w, strings.ReplaceAll(digits.ReplaceAllString(got, "9"), "<", "‹"))
}

// devUp is a running `flotilla dev up`, started as `make dev` starts it.
type devUp struct {
	cmd    *exec.Cmd
	ready  chan struct{}
	exited chan error
	stderr bytes.Buffer
	mu     sync.Mutex
	out    bytes.Buffer
}

func startDevUp(t *testing.T, root string, args ...string) *devUp {
	t.Helper()
	d := &devUp{ready: make(chan struct{}), exited: make(chan error, 1)}
	d.cmd = exec.Command(filepath.Join(root, "bin", "flotilla"), append([]string{"dev", "up"}, args...)...)
	d.cmd.Dir = root
	d.cmd.Stderr = &d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		scanner := bufio.NewScanner(stdout)
		signalled := false
		for scanner.Scan() {
			line := scanner.Text()
			d.mu.Lock()
			d.out.WriteString(line + "\n")
			d.mu.Unlock()
			if strings.HasPrefix(line, "ready:") && !signalled {
				signalled = true
				close(d.ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		d.exited <- d.cmd.Wait()
	}()
	t.Cleanup(func() {
		// On an early failure, stop dev up (its children get SIGKILL when it dies).
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	})
	return d
}

func (d *devUp) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

func (d *devUp) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-d.ready:
	case err := <-d.exited:
		d.exited <- err
		t.Fatalf("flotilla dev up exited before it was ready: %v\nstderr:\n%s", err, d.stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("flotilla dev up not ready after 3 minutes\nstderr:\n%s", d.stderr.String())
	}
}

// interrupt presses Ctrl-C and waits for dev up to stop everything and say so.
func (d *devUp) interrupt(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.exited:
		if err != nil {
			t.Fatalf("dev up exited with %v after Ctrl-C\nstderr:\n%s", err, d.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dev up still running 30 seconds after Ctrl-C")
	}
	if !strings.Contains(d.output(), "stopped.") {
		t.Errorf("dev up did not report that it stopped:\n%s", d.output())
	}
}

// copyFile copies an executable file.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}
