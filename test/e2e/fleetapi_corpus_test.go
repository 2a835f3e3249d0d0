package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

var corpusSpokes = []string{"spoke-1", "spoke-2", "spoke-3"}

// childKinds are the kinds of every child in the corpus, as kubectl lists them.
const childKinds = "deployments,services,configmaps,jobs,ingresses,horizontalpodautoscalers"

// TestFleetAPICorpus runs kro's own core-kinds examples and test fixtures (corpusCases) on three
// full spokes: every RGD is served on every spoke through one APIPropagation; each case's
// instances are created with kubectl on one spoke (round-robin), all at once, and each becomes
// ACTIVE there, with its status fields computed from its children, its children on that spoke
// and on no other, and the hub's APIPropagation counting the fleet's instances. Cases whose
// children are cluster-scoped or in another namespace show ERROR saying why, and none of those
// children is ever written (the spokes' audit logs say so); as under kro, the children that may
// be applied are (core-dns's ConfigMap, in the instance's namespace). Deleted, the instances take their children
// with them. Two RGDs of the corpus share a name with two others; they run in a second wave,
// once the first ones are deleted (removal Delete takes their CRDs away).
func TestFleetAPICorpus(t *testing.T) {
	start := time.Now()
	_, fleet := startFleet(t, 0, map[string]string{"spoke-1": "eu-west", "spoke-2": "us-east", "spoke-3": "ap-south"},
		func(s *localfleet.PlaneSpec) { s.AuditLog = true })
	t.Logf("fleet up in %s", time.Since(start).Round(time.Second))
	hubKC := fleet.Hub().KubeconfigPath()
	kroDir := kroModuleDir(t)
	cases := loadCorpus(t, kroDir)

	waves := map[int][]*loadedCase{}
	var names []string
	for _, c := range cases {
		waves[c.wave] = append(waves[c.wave], c)
		if !slices.Contains(names, c.rgdName) {
			names = append(names, c.rgdName)
		}
	}
	applyRGDs(t, hubKC, waves[1])
	fapi := filepath.Join(t.TempDir(), "fapi.yaml")
	writeFile(t, fapi, corpusAPIPropagation(names))
	mustKubectl(t, hubKC, "apply", "-f", fapi)
	waitServing(t, hubKC, len(waves[1]))

	for _, wave := range []int{1, 2} {
		if wave == 2 {
			// The second wave's RGDs take the names of first-wave ones: delete those, wait for
			// their CRDs to leave every spoke, and apply the second wave's.
			var taken []string
			for _, c := range waves[2] {
				taken = append(taken, c.rgdName)
			}
			mustKubectl(t, hubKC, append([]string{"delete", "rgd", "--wait=true", "--timeout=90s"}, taken...)...)
			for _, spoke := range corpusSpokes {
				for _, name := range taken {
					eventuallyKubectl(t, fleet.Plane(spoke).KubeconfigPath(), "", "get", "crd",
						"-l", "kro.run/resource-graph-definition-name="+name, "-o", "name")
				}
			}
			applyRGDs(t, hubKC, waves[2])
			waitServing(t, hubKC, len(waves[1]))
		}
		waveStart := time.Now()
		runCorpusWave(t, fleet, hubKC, waves[wave])
		t.Logf("wave %d (%d cases) done in %s", wave, len(waves[wave]), time.Since(waveStart).Round(time.Second))
	}
	t.Logf("corpus done in %s (fleet start included)", time.Since(start).Round(time.Second))
}

// waitQuiet waits until no spoke has seen a write from Flotilla for quiet, and fails the test
// if writes go on: a settled corpus costs no write.
func waitQuiet(t *testing.T, fleet *localfleet.Fleet, quiet time.Duration) {
	t.Helper()
	fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("no write from Flotilla to a spoke for %s", quiet), func() error {
		var recent []string
		for _, spoke := range corpusSpokes {
			events, err := fleet.Plane(spoke).AuditEvents()
			if err != nil {
				return err
			}
			for _, e := range events {
				if e.Mutating() && strings.HasPrefix(e.UserAgent, "flotilla") && time.Since(e.StageTimestamp) < quiet {
					recent = append(recent, fmt.Sprintf("%s: %s %s %s/%s", spoke, e.Verb, e.RequestURI, e.ObjectRef.Namespace, e.ObjectRef.Name))
				}
			}
		}
		if len(recent) > 0 {
			return fmt.Errorf("%d recent writes, the last ones: %s", len(recent), strings.Join(recent[max(0, len(recent)-10):], "; "))
		}
		return nil
	})
}

// checkAsserts waits until every case's partial objects (which) match on its spoke.
func checkAsserts(t *testing.T, fleet *localfleet.Fleet, cases []*loadedCase, which func(*loadedCase) []string) {
	t.Helper()
	fleettest.Eventually(t, 60*time.Second, "kro's asserts", func() error {
		var failed []string
		for _, c := range cases {
			for _, file := range which(c) {
				for _, want := range readYAMLFile(t, filepath.Join(c.kroDir, file)) {
					if err := checkAssert(t, fleet.Plane(c.spoke).KubeconfigPath(), c.namespace, want); err != nil {
						failed = append(failed, fmt.Sprintf("%s %s: %v", c.name, file, err))
					}
				}
			}
		}
		if len(failed) > 0 {
			return errors.New(strings.Join(failed, "\n  "))
		}
		return nil
	})
}

// loadedCase is a corpus case read from the kro module, with the spoke it runs on.
type loadedCase struct {
	corpusCase
	spoke      string
	rgdName    string
	resource   string // kind.group, for kubectl
	objs       []*unstructured.Unstructured
	prereqObjs []*unstructured.Unstructured // prereqs, read
	rgdPath    string
	kroDir     string
	brokenObj  *unstructured.Unstructured
}

// loadCorpus reads each case's RGD and instances from the kro module and spreads the cases
// over the spokes round-robin.
func loadCorpus(t *testing.T, kroDir string) []*loadedCase {
	t.Helper()
	var out []*loadedCase
	for i, c := range corpusCases {
		if c.wave == 0 {
			c.wave = 1
		}
		l := &loadedCase{corpusCase: c, spoke: corpusSpokes[i%len(corpusSpokes)],
			rgdPath: filepath.Join(kroDir, c.rgd), kroDir: kroDir}
		rgds := readYAMLFile(t, l.rgdPath)
		if len(rgds) != 1 || rgds[0].GetKind() != "ResourceGraphDefinition" {
			t.Fatalf("%s: want one ResourceGraphDefinition", c.rgd)
		}
		l.rgdName = rgds[0].GetName()
		kind, _, _ := unstructured.NestedString(rgds[0].Object, "spec", "schema", "kind")
		group, _, _ := unstructured.NestedString(rgds[0].Object, "spec", "schema", "group")
		if group == "" {
			group = "kro.run"
		}
		l.resource = strings.ToLower(kind) + "." + group
		var objs []*unstructured.Unstructured
		if c.inline != "" {
			u := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(c.inline), &u.Object); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			objs = append(objs, u)
		} else {
			objs = readYAMLFile(t, filepath.Join(kroDir, c.instances))
		}
		for _, u := range objs {
			if u.GetKind() != kind {
				t.Fatalf("%s: %s is a %s, not a %s", c.name, c.instances, u.GetKind(), kind)
			}
			// kro's instance files either name the namespace the case runs in, or none (then
			// the case's namespace is set here: the only change made to kro's instances).
			if ns := u.GetNamespace(); ns != "" && ns != c.namespace {
				t.Fatalf("%s: the instance is in namespace %s, the case in %s", c.name, ns, c.namespace)
			}
			u.SetNamespace(c.namespace)
		}
		l.objs = objs
		if c.broken != "" {
			l.brokenObj = &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(c.broken), &l.brokenObj.Object); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			l.brokenObj.SetNamespace(c.namespace)
		}
		for _, p := range c.prereqs {
			l.prereqObjs = append(l.prereqObjs, readYAMLFile(t, filepath.Join(kroDir, p))...)
		}
		out = append(out, l)
	}
	return out
}

// check says whether an instance has settled as the case expects.
func (c *loadedCase) check(u *unstructured.Unstructured) error {
	if u == nil {
		return errors.New("not listed")
	}
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	if c.refused != nil {
		if state != "ERROR" {
			return fmt.Errorf("state %q, want ERROR", state)
		}
		if msg := conditionMessages(u); !strings.Contains(msg, "may deliver only") {
			return fmt.Errorf("ERROR without the refusal in its conditions: %s", msg)
		}
		return nil
	}
	if state != "ACTIVE" {
		return fmt.Errorf("state %q: %s", state, conditionMessages(u))
	}
	for path, want := range c.status {
		if err := fieldIs(u, "status."+path, want); err != nil {
			return err
		}
	}
	for path, want := range c.spec {
		if err := fieldIs(u, "spec."+path, want); err != nil {
			return err
		}
	}
	return nil
}

// checkBroken says whether the broken instance shows ERROR, saying why.
func (c *loadedCase) checkBroken(u *unstructured.Unstructured) error {
	if u == nil {
		return errors.New("not listed")
	}
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	if msg := conditionMessages(u); state != "ERROR" || !strings.Contains(msg, c.brokenMessage) {
		return fmt.Errorf("state %q, conditions %s; want ERROR and %q", state, msg, c.brokenMessage)
	}
	return nil
}

// checkChildren compares the children found on the case's spoke with those expected.
func (c *loadedCase) checkChildren(found []*unstructured.Unstructured) error {
	var got []string
	for _, child := range found {
		if child.GetNamespace() != c.namespace {
			return fmt.Errorf("child %s/%s in namespace %s", child.GetKind(), child.GetName(), child.GetNamespace())
		}
		got = append(got, child.GetKind()+"/"+child.GetName())
	}
	want := slices.Clone(c.corpusCase.children)
	for i, w := range want {
		if kind, ok := strings.CutSuffix(w, "/*"); ok {
			for _, g := range got {
				if strings.HasPrefix(g, kind+"/") {
					want[i] = g
				}
			}
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("children %v, want %v", got, want)
	}
	for ref, value := range c.childData {
		i := slices.Index(got, ref)
		if i < 0 {
			return fmt.Errorf("no %s", ref)
		}
		data, _, _ := unstructured.NestedStringMap(childByName(found, ref).Object, "data")
		if !slices.Contains(mapValues(data), value) {
			return fmt.Errorf("%s data %v, want a value %q", ref, data, value)
		}
	}
	return nil
}

func childByName(found []*unstructured.Unstructured, ref string) *unstructured.Unstructured {
	for _, u := range found {
		if u.GetKind()+"/"+u.GetName() == ref {
			return u
		}
	}
	return nil
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func fieldIs(u *unstructured.Unstructured, path, want string) error {
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, strings.Split(path, ".")...)
	if err != nil || !found {
		return fmt.Errorf("no %s (%v)", path, err)
	}
	if got := fmt.Sprint(v); got != want {
		return fmt.Errorf("%s = %s, want %s", path, got, want)
	}
	return nil
}

func conditionMessages(u *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok {
			out = append(out, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	return strings.Join(out, "; ")
}

func instanceKey(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

func sameObject(a, b *unstructured.Unstructured) bool {
	return a.GetKind() == b.GetKind() && a.GetNamespace() == b.GetNamespace() && a.GetName() == b.GetName()
}

func names(us []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
	}
	return out
}
