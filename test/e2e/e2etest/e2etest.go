package e2etest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// Kubectl runs the kubectl built by `make tools` with a kubeconfig and returns its combined
// output and error.
func Kubectl(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, fleettest.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// MustKubectl is Kubectl that fails the test on error.
func MustKubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := Kubectl(t, kubeconfig, args...)
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return out
}

// built is the flotilla binary BuildFlotilla made, once for every test of a test binary (a
// link costs ten seconds of CPU); its TestMain removes the directory (RemoveBuilt).
var built struct {
	sync.Mutex
	dir, path string
}

// BuildFlotilla compiles the flotilla binary into a temporary directory the first time it is
// asked for, and returns that binary every time: tests run it, and copy it where they need
// it elsewhere.
func BuildFlotilla(t *testing.T) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.path != "" {
		return built.path
	}
	dir, err := os.MkdirTemp("", "flotilla-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "flotilla")
	cmd := exec.Command("go", "build", "-o", out, "github.com/flotilla-dev/flotilla/cmd/flotilla")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("build flotilla: %v", err)
	}
	built.dir, built.path = dir, out
	return out
}

// RemoveBuilt removes what buildFlotilla built.
func RemoveBuilt() {
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	built.dir, built.path = "", ""
}

// RunFlotillaHub runs `flotilla hub` against the hub until the test ends (StartProcess), with
// the flags every test wants and extraArgs.
func RunFlotillaHub(t *testing.T, flotilla, hubKubeconfig string, extraArgs ...string) (log func() string) {
	t.Helper()
	args := append([]string{"hub", "--hub-kubeconfig", hubKubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--probe-interval=1s"}, extraArgs...)
	return StartProcess(t, flotilla, args...)
}

// StartProcess runs a long-lived command until the test ends; then it stops it, by its PID,
// with SIGTERM (SIGKILL after 15 s, which fails the test). Its output is shown if the test
// failed, and returned by the function it returns at any time.
func StartProcess(t *testing.T, bin string, args ...string) (output func() string) {
	t.Helper()
	var buf fleettest.SyncBuffer
	proc := exec.Command(bin, args...)
	proc.Stdout, proc.Stderr = &buf, &buf
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	name := strings.Join(append([]string{filepath.Base(bin)}, args[:min(len(args), 1)]...), " ")
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	t.Cleanup(func() {
		_ = proc.Process.Signal(syscall.SIGTERM) // by its PID, while it is known to be ours
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = proc.Process.Kill()
			<-exited
			t.Errorf("%s did not stop within 15s of SIGTERM", name)
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, buf.String())
		}
	})
	return buf.String
}

// Run runs a command to its end (within 5 minutes) and fails the test if it fails; it returns
// its output.
func Run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// RunFlotilla runs a flotilla command against the hub and fails the test if it fails.
func RunFlotilla(t *testing.T, flotilla, hubKubeconfig string, args ...string) string {
	t.Helper()
	return Run(t, flotilla, append(args, "--hub-kubeconfig", hubKubeconfig)...)
}

// StartJoinedFleet starts a hub and three full spokes (regions eu-west, us-east, ap-south),
// installs Flotilla, runs `flotilla hub` and joins the spokes, all with the binaries.
func StartJoinedFleet(t *testing.T) (flotilla string, fleet *localfleet.Fleet) {
	t.Helper()
	return StartFleet(t, 0, map[string]string{"spoke-1": "eu-west", "spoke-2": "us-east", "spoke-3": "ap-south"})
}

// StandardPlanes are the planes most tests of this package ask for: the hub and three full,
// audited spokes. A test that uses fewer spokes joins only those, so that the tests hand one
// fleet on (fleettest.Main) instead of each starting a shape of its own.
func StandardPlanes() []localfleet.PlaneSpec {
	specs := []localfleet.PlaneSpec{fleettest.Hub()}
	for _, name := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		s := fleettest.FullSpoke(name, nil)
		s.AuditLog = true
		specs = append(specs, s)
	}
	return specs
}

// StartFleet starts a hub and full spokes, installs and runs Flotilla and joins one spoke per
// entry of regions (its region label). Without a podReadyDelay, and for spokes all among them,
// the fleet is standardPlanes; otherwise it is the hub and the spokes of regions alone, whose
// Pods take podReadyDelay to become Ready.
func StartFleet(t *testing.T, podReadyDelay time.Duration, regions map[string]string) (flotilla string, fleet *localfleet.Fleet) {
	t.Helper()
	flotilla = BuildFlotilla(t)
	specs := StandardPlanes()
	if podReadyDelay != 0 || slices.ContainsFunc(slices.Collect(maps.Keys(regions)), func(n string) bool {
		return !slices.ContainsFunc(specs, func(s localfleet.PlaneSpec) bool { return s.Name == n })
	}) {
		specs = []localfleet.PlaneSpec{fleettest.Hub()}
		for _, name := range slices.Sorted(maps.Keys(regions)) {
			s := fleettest.FullSpoke(name, nil)
			s.PodReadyDelay = podReadyDelay
			specs = append(specs, s)
		}
	}
	fleet = fleettest.Start(t, specs...)
	hubKC := fleet.Hub().KubeconfigPath()
	RunFlotilla(t, flotilla, hubKC, "install", "--crds-only")
	RunFlotillaHub(t, flotilla, hubKC)
	// The grant covers the groups of the CRDs the tests deliver before the spokes serve them:
	// kro.run (fleet APIs), example.com (CRDs delivered by Propagations), test.kro.run (kro's
	// chainsaw RGDs in the corpus) and the ACK groups whose CRDs the corpus's CRD-group
	// instances make: removing such a CRD, or a Namespace, first lists what it would take
	// along, which the grant must allow.
	groups := "kro.run,example.com,test.kro.run,services.k8s.aws,ec2.services.k8s.aws,ecr.services.k8s.aws," +
		"ecrpublic.services.k8s.aws,eks.services.k8s.aws,iam.services.k8s.aws,s3.services.k8s.aws,sqs.services.k8s.aws"
	for name, region := range regions {
		RunFlotilla(t, flotilla, hubKC, "join", name, "--kubeconfig", fleet.Plane(name).KubeconfigPath(), "--label", "region="+region, "--api-groups", groups)
	}
	return flotilla, fleet
}

// EventuallyKubectl waits until kubectl's output (trimmed) equals want.
func EventuallyKubectl(t *testing.T, kubeconfig, want string, args ...string) {
	t.Helper()
	fleettest.Eventually(t, 90*time.Second, fmt.Sprintf("kubectl %s = %q", strings.Join(args, " "), want), func() error {
		out, err := Kubectl(t, kubeconfig, args...)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if strings.TrimSpace(out) != want {
			return fmt.Errorf("got %q", out)
		}
		return nil
	})
}

// AssertAbsent waits until kubectl finds none of what args name.
func AssertAbsent(t *testing.T, kubeconfig string, args ...string) {
	t.Helper()
	fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("%v absent", args), func() error {
		out, err := Kubectl(t, kubeconfig, append([]string{"get", "--ignore-not-found", "-o", "name"}, args...)...)
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("present: %q %v", out, err)
		}
		return nil
	})
}

// WriteFile writes content to path (readable by its owner only) or fails the test.
func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
