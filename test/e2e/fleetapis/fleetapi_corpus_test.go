package fleetapis

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

// childKinds are the kinds of every child in the corpus, as kubectl lists them: under tenancy
// Cluster, cluster-scoped ones and instances of other corpus APIs (the Tenant's) too.
const childKinds = "deployments,services,configmaps,jobs,ingresses,horizontalpodautoscalers," +
	"namespaces,clusterroles,clusterrolebindings,serviceaccounts,resourcequotas,networkpolicies," +
	"customresourcedefinitions,tenantenvironments.kro.run,tenantapplications.kro.run"

// TestFleetAPICorpus runs kro's own core-kinds examples and test fixtures (corpusCases) on three
// full spokes: every RGD is served on every spoke through one of two APIPropagations, corpus
// (the default tenancy, Namespace) or corpus-cluster (tenancy Cluster); each case's instances
// are created with kubectl on one spoke (round-robin), all at once, and each becomes ACTIVE
// there, with its status fields computed from its children, its children on that spoke and on
// no other (under corpus-cluster: cluster-scoped ones, in other namespaces, and instances of
// other corpus APIs, expanded in turn), and the hub's APIPropagations counting the fleet's
// instances. Cases of the default tenancy whose children are cluster-scoped or in another
// namespace show ERROR saying why, and none of those children is ever written (the spokes'
// audit logs say so); as under kro, the children that may be applied are (core-dns's
// ConfigMap and Service, in the instance's namespace). Deleted, the instances take their children with
// them, Namespaces and cluster-scoped ones included. Two RGDs of the corpus share a name with
// two others; they run in a second wave, once the first ones are deleted (removal Delete takes
// their CRDs away); core-dns moves to corpus-cluster for it, and runs again.
func TestFleetAPICorpus(t *testing.T) {
	start := time.Now()
	_, fleet := startJoinedFleet(t)
	t.Logf("fleet up in %s", time.Since(start).Round(time.Second))
	hubKC := fleet.Hub().KubeconfigPath()
	kroDir := kroModuleDir(t)
	cases := loadCorpus(t, kroDir)

	waves := map[int][]*loadedCase{}
	for _, c := range cases {
		waves[c.wave] = append(waves[c.wave], c)
	}
	applyRGDs(t, hubKC, waves[1])
	served := servedBy(waves[1], nil)
	applyAPIPropagations(t, hubKC, served)
	waitServing(t, hubKC, served)

	for _, wave := range []int{1, 2} {
		if wave == 2 {
			// The second wave's RGDs take the names of first-wave ones: delete those, wait for
			// their CRDs to leave every spoke, and apply the second wave's. core-dns, whose RGD
			// stays, moves to corpus-cluster: an RGD moved between APIPropagations keeps its CRD.
			next := servedBy(waves[1], waves[2])
			var taken []string
			for _, c := range waves[2] {
				if next[c.rgdName] == served[c.rgdName] {
					taken = append(taken, c.rgdName)
				}
			}
			mustKubectl(t, hubKC, append([]string{"delete", "rgd", "--wait=true", "--timeout=90s"}, taken...)...)
			for _, spoke := range corpusSpokes {
				for _, name := range taken {
					eventuallyKubectl(t, fleet.Plane(spoke).KubeconfigPath(), "", "get", "crd",
						"-l", "kro.run/resource-graph-definition-name="+name, "-o", "name")
				}
			}
			applyRGDs(t, hubKC, waves[2])
			served = next
			applyAPIPropagations(t, hubKC, served)
			waitServing(t, hubKC, served)
		}
		waveStart := time.Now()
		runCorpusWave(t, fleet, hubKC, waves[wave])
		t.Logf("wave %d (%d cases) done in %s", wave, len(waves[wave]), time.Since(waveStart).Round(time.Second))
	}
	t.Logf("corpus done in %s (fleet start included)", time.Since(start).Round(time.Second))
}

// servedBy says which APIPropagation serves each RGD: the first wave's cases', then the second
// wave's (nil before it), whose RGD takes a first-wave name, or moves to another APIPropagation.
func servedBy(first, second []*loadedCase) map[string]string {
	out := map[string]string{}
	for _, c := range append(slices.Clone(first), second...) {
		out[c.rgdName] = c.apiPropagation()
	}
	return out
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
		if c.childrenFromRGD {
			l.children = templateNames(t, rgds[0])
		}
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
			// the case's namespace is set here: with serviceIPAt, the only changes made to
			// kro's instances).
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

// templateNames names an RGD's templates as the children of a case are named (corpusCase
// children): every one must be cluster-scoped with a literal name (kro's CRD groups).
func templateNames(t *testing.T, rgd *unstructured.Unstructured) []string {
	t.Helper()
	resources, _, _ := unstructured.NestedSlice(rgd.Object, "spec", "resources")
	var out []string
	for _, r := range resources {
		template, _, _ := unstructured.NestedMap(r.(map[string]any), "template")
		u := unstructured.Unstructured{Object: template}
		if u.GetKind() != "CustomResourceDefinition" || strings.Contains(u.GetName(), "${") {
			t.Fatalf("%s: template %s %s is not a CRD of a literal name", rgd.GetName(), u.GetKind(), u.GetName())
		}
		out = append(out, u.GetKind()+"//"+u.GetName())
	}
	return out
}

// apiPropagation is the APIPropagation serving the case's RGD.
func (c *loadedCase) apiPropagation() string {
	if c.tenancy == "Cluster" {
		return corpusClusterFAPI
	}
	return corpusFAPI
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
		if msg := conditionMessages(u); !strings.Contains(msg, "may deliver only") && !strings.Contains(msg, "may read and write only its own namespace") {
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
		got = append(got, c.childName(child))
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
		data, _, _ := unstructured.NestedStringMap(childByName(c, found, ref).Object, "data")
		if !slices.Contains(mapValues(data), value) {
			return fmt.Errorf("%s data %v, want a value %q", ref, data, value)
		}
	}
	return nil
}

// childName names a child as the case's children do: Kind/name in the case's namespace,
// Kind/namespace/name elsewhere, Kind//name when cluster-scoped.
func (c *loadedCase) childName(child *unstructured.Unstructured) string {
	if child.GetNamespace() == c.namespace {
		return child.GetKind() + "/" + child.GetName()
	}
	return child.GetKind() + "/" + child.GetNamespace() + "/" + child.GetName()
}

func childByName(c *loadedCase, found []*unstructured.Unstructured, ref string) *unstructured.Unstructured {
	for _, u := range found {
		if c.childName(u) == ref {
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
