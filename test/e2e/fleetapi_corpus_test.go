package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

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
// children are cluster-scoped or in another namespace show ERROR saying why, and nothing of
// theirs is written (the spokes' audit logs say so). Deleted, the instances take their children
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
	applyRGDs(t, hubKC, kroDir, waves[1])
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
			applyRGDs(t, hubKC, kroDir, waves[2])
			waitServing(t, hubKC, len(waves[1]))
		}
		waveStart := time.Now()
		runCorpusWave(t, fleet, hubKC, waves[wave])
		t.Logf("wave %d (%d cases) done in %s", wave, len(waves[wave]), time.Since(waveStart).Round(time.Second))
	}
	t.Logf("corpus done in %s (fleet start included)", time.Since(start).Round(time.Second))
}

// runCorpusWave creates every instance of cases at once, waits for all of them together, checks
// them, then deletes them all and waits for their children to go.
func runCorpusWave(t *testing.T, fleet *localfleet.Fleet, hubKC string, cases []*loadedCase) {
	t.Helper()
	kc := func(spoke string) string { return fleet.Plane(spoke).KubeconfigPath() }
	resources := map[string][]string{} // spoke -> instance resources, for kubectl get
	for _, spoke := range corpusSpokes {
		var objs []*unstructured.Unstructured
		namespaces := map[string]bool{"default": true}
		for _, c := range cases {
			if c.spoke != spoke {
				continue
			}
			if !slices.Contains(resources[spoke], c.resource) {
				resources[spoke] = append(resources[spoke], c.resource)
			}
			if !namespaces[c.namespace] {
				namespaces[c.namespace] = true
				ns := &unstructured.Unstructured{}
				ns.SetAPIVersion("v1")
				ns.SetKind("Namespace")
				ns.SetName(c.namespace)
				objs = append(objs, ns)
			}
			for _, p := range c.prereqObjs {
				if !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return sameObject(o, p) }) {
					objs = append(objs, p)
				}
			}
			objs = append(objs, c.objs...)
			if c.brokenObj != nil {
				objs = append(objs, c.brokenObj)
			}
		}
		if len(objs) == 0 {
			continue
		}
		file := filepath.Join(t.TempDir(), spoke+".yaml")
		writeFile(t, file, yamlStream(t, objs))
		mustKubectl(t, kc(spoke), "create", "-f", file)
	}
	created := time.Now()

	// Every instance ACTIVE (ERROR for the refused), with its status and spec fields.
	instances := map[string]*unstructured.Unstructured{} // kind/namespace/name -> the spoke's instance
	fleettest.Eventually(t, 3*time.Minute, "every instance ACTIVE, or refused", func() error {
		for _, spoke := range corpusSpokes {
			if len(resources[spoke]) == 0 {
				continue
			}
			items, err := kubectlList(t, kc(spoke), "get", strings.Join(resources[spoke], ","), "-A")
			if err != nil {
				return err
			}
			for _, u := range items {
				instances[instanceKey(u)] = u
			}
		}
		var pending []string
		for _, c := range cases {
			for _, want := range c.objs {
				if err := c.check(instances[instanceKey(want)]); err != nil {
					pending = append(pending, fmt.Sprintf("%s %s on %s: %v", c.name, want.GetName(), c.spoke, err))
				}
			}
			if c.brokenObj != nil {
				if err := c.checkBroken(instances[instanceKey(c.brokenObj)]); err != nil {
					pending = append(pending, fmt.Sprintf("%s broken %s on %s: %v", c.name, c.brokenObj.GetName(), c.spoke, err))
				}
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d not there yet:\n  %s", len(pending), strings.Join(pending, "\n  "))
		}
		return nil
	})
	t.Logf("every instance settled %s after its creation", time.Since(created).Round(100*time.Millisecond))
	for _, c := range cases {
		if c.refused != nil {
			for _, want := range c.objs {
				t.Logf("%s, refused: %s", c.name, conditionMessages(instances[instanceKey(want)]))
			}
		}
	}

	// The children: on the instance's spoke, exactly those expected, and nowhere else.
	uids := map[string]*loadedCase{}
	for _, c := range cases {
		for _, want := range c.objs {
			uids[string(instances[instanceKey(want)].GetUID())] = c
		}
		if c.brokenObj != nil {
			uids[string(instances[instanceKey(c.brokenObj)].GetUID())] = c
		}
	}
	fleettest.Eventually(t, 30*time.Second, "every child on its instance's spoke only", func() error {
		var problems []string
		for _, spoke := range corpusSpokes {
			children, err := kubectlList(t, kc(spoke), "get", childKinds, "-A", "-l", "kro.run/instance-id")
			if err != nil {
				return err
			}
			found := map[*loadedCase][]*unstructured.Unstructured{}
			for _, child := range children {
				if c := uids[child.GetLabels()["kro.run/instance-id"]]; c != nil {
					found[c] = append(found[c], child)
				}
			}
			for _, c := range cases {
				if c.spoke == spoke {
					if err := c.checkChildren(found[c]); err != nil {
						problems = append(problems, fmt.Sprintf("%s on %s: %v", c.name, spoke, err))
					}
				} else if len(found[c]) > 0 {
					problems = append(problems, fmt.Sprintf("%s has children on %s, its instances are on %s: %v",
						c.name, spoke, c.spoke, names(found[c])))
				}
			}
		}
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "\n  "))
		}
		return nil
	})

	// kro's own partial objects for the instances, their children and their CRDs; then kro's
	// updates of instances, and what they change.
	checkAsserts(t, fleet, cases, func(c *loadedCase) []string { return c.asserts })
	for _, c := range cases {
		if c.update != "" {
			mustKubectl(t, kc(c.spoke), "apply", "-n", c.namespace, "-f", filepath.Join(c.kroDir, c.update))
		}
	}
	checkAsserts(t, fleet, cases, func(c *loadedCase) []string { return c.updateAsserts })

	// The hub counts the fleet's instances, per API and in all.
	want := instanceCounts{}
	perAPI := map[string]instanceCounts{}
	for _, c := range cases {
		n := int32(len(c.objs))
		counts := perAPI[c.rgdName]
		counts.Total += n
		want.Total += n
		if c.refused != nil {
			counts.Error += n
			want.Error += n
		} else {
			counts.Active += n
			want.Active += n
		}
		if c.brokenObj != nil {
			counts.Total++
			counts.Error++
			want.Total++
			want.Error++
		}
		perAPI[c.rgdName] = counts
	}
	fleettest.Eventually(t, 60*time.Second, "the APIPropagation counting the fleet's instances", func() error {
		status, err := corpusStatus(t, hubKC)
		if err != nil {
			return err
		}
		if status.Instances == nil || *status.Instances != want {
			return fmt.Errorf("status.instances %+v, want %+v", status.Instances, want)
		}
		for name, counts := range perAPI {
			i := slices.IndexFunc(status.APIs, func(a apiStatus) bool { return a.Name == name })
			if i < 0 {
				return fmt.Errorf("status.apis lacks %s", name)
			}
			if got := status.APIs[i].Instances; got == nil || *got != counts {
				return fmt.Errorf("status.apis[%s].instances %+v, want %+v", name, got, counts)
			}
		}
		for _, c := range cases {
			if c.brokenObj == nil {
				continue
			}
			i := slices.IndexFunc(status.APIs, func(a apiStatus) bool { return a.Name == c.rgdName })
			if !slices.ContainsFunc(status.APIs[i].NotReady, func(n notReady) bool {
				return n.Cluster == c.spoke && n.Instance == c.namespace+"/"+c.brokenObj.GetName() &&
					n.State == "ERROR" && strings.Contains(n.Message, c.brokenMessage)
			}) {
				return fmt.Errorf("status.apis[%s].notReady %+v lacks %s/%s on %s", c.rgdName, status.APIs[i].NotReady,
					c.namespace, c.brokenObj.GetName(), c.spoke)
			}
		}
		return nil
	})

	// Settled, the fleet goes quiet: Flotilla writes nothing more to the spokes.
	waitQuiet(t, fleet, 5*time.Second)

	// Deleted, the instances take their children with them.
	for _, spoke := range corpusSpokes {
		if len(resources[spoke]) > 0 {
			mustKubectl(t, kc(spoke), "delete", strings.Join(resources[spoke], ","), "--all", "-A", "--wait=false")
		}
	}
	fleettest.Eventually(t, 2*time.Minute, "every instance and child gone", func() error {
		var left []string
		for _, spoke := range corpusSpokes {
			if len(resources[spoke]) > 0 {
				items, err := kubectlList(t, kc(spoke), "get", strings.Join(resources[spoke], ","), "-A")
				if err != nil {
					return err
				}
				for _, u := range items {
					left = append(left, spoke+": "+instanceKey(u)+" "+fmt.Sprint(u.Object["status"]))
				}
			}
			children, err := kubectlList(t, kc(spoke), "get", childKinds, "-A", "-l", "kro.run/instance-id")
			if err != nil {
				return err
			}
			for _, child := range children {
				if uids[child.GetLabels()["kro.run/instance-id"]] != nil {
					left = append(left, spoke+": child "+child.GetKind()+"/"+child.GetNamespace()+"/"+child.GetName())
				}
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %s", strings.Join(left, "; "))
		}
		return nil
	})

	// Nothing of a refused case was ever written on its spoke.
	for _, c := range cases {
		if c.refused == nil {
			continue
		}
		events, err := fleet.Plane(c.spoke).AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if !e.Mutating() {
				continue
			}
			for _, ref := range c.refused {
				if e.ObjectRef.APIGroup == ref.Group && e.ObjectRef.Resource == ref.Resource &&
					e.ObjectRef.Namespace == ref.Namespace && e.ObjectRef.Name == ref.Name {
					t.Errorf("%s: %s %s/%s/%s on %s by %s (code %d), though the case is refused", c.name, e.Verb,
						ref.Resource, ref.Namespace, ref.Name, c.spoke, e.User.Username, e.ResponseStatus.Code)
				}
			}
		}
	}
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

// applyRGDs applies the cases' RGDs on the hub, as kro's files have them.
func applyRGDs(t *testing.T, hubKC, kroDir string, cases []*loadedCase) {
	t.Helper()
	args := []string{"apply"}
	for _, c := range cases {
		args = append(args, "-f", c.rgdPath)
	}
	mustKubectl(t, hubKC, args...)
}

// corpusAPIPropagation serves the corpus' RGDs on every spoke. Removal Delete: the second
// wave's RGDs reuse names of the first, whose CRDs must go for them.
func corpusAPIPropagation(names []string) string {
	list, _ := json.Marshal(names)
	return `apiVersion: flotilla.dev/v1alpha1
kind: Placement
metadata:
  name: all-clusters
  namespace: flotilla-system
spec:
  clusterSelector: {}
---
apiVersion: flotilla.dev/v1alpha1
kind: APIPropagation
metadata:
  name: corpus
spec:
  resourceGraphDefinitions:
    names: ` + string(list) + `
  placementRef: {name: all-clusters, namespace: flotilla-system}
  removal: Delete
`
}

// waitServing waits for every chosen RGD to be served, at its newest generation, on every spoke.
func waitServing(t *testing.T, hubKC string, apis int) {
	t.Helper()
	fleettest.Eventually(t, 2*time.Minute, "the corpus served on every spoke", func() error {
		status, err := corpusStatus(t, hubKC)
		if err != nil {
			return err
		}
		if status.APICount != int32(apis) {
			return fmt.Errorf("apiCount %d, want %d", status.APICount, apis)
		}
		for _, c := range status.Conditions {
			if c.Type == "Serving" && c.Status == "True" {
				return nil
			}
			if c.Type == "Serving" {
				return fmt.Errorf("Serving %s %s: %s", c.Status, c.Reason, c.Message)
			}
		}
		return errors.New("no Serving condition")
	})
}

type instanceCounts struct {
	Total      int32 `json:"total"`
	Active     int32 `json:"active"`
	InProgress int32 `json:"inProgress"`
	Error      int32 `json:"error"`
	Deleting   int32 `json:"deleting"`
}

type apiStatus struct {
	Name      string          `json:"name"`
	Instances *instanceCounts `json:"instances"`
	NotReady  []notReady      `json:"notReady"`
}

type notReady struct {
	Cluster, Instance, State, Reason, Message string
}

type fapiStatus struct {
	APICount   int32 `json:"apiCount"`
	Conditions []struct {
		Type, Status, Reason, Message string
	} `json:"conditions"`
	Instances *instanceCounts `json:"instances"`
	APIs      []apiStatus     `json:"apis"`
}

func corpusStatus(t *testing.T, hubKC string) (*fapiStatus, error) {
	out, err := kubectlStdout(t, hubKC, "get", "apipropagation", "corpus", "-o", "jsonpath={.status}")
	if err != nil {
		return nil, err
	}
	status := &fapiStatus{}
	if err := json.Unmarshal([]byte(out), status); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	return status, nil
}

// kubectlList runs a kubectl get with -o json and returns the items.
func kubectlList(t *testing.T, kubeconfig string, args ...string) ([]*unstructured.Unstructured, error) {
	out, err := kubectlStdout(t, kubeconfig, append(args, "-o", "json")...)
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON([]byte(out)); err != nil {
		return nil, fmt.Errorf("%v: %.200s", err, out)
	}
	var items []*unstructured.Unstructured
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	return items, nil
}

// kubectlStdout is kubectl with its standard output alone (warnings go to standard error).
func kubectlStdout(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, fleettest.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// kroModuleDir is the pinned kro module's directory in the module cache.
func kroModuleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/kubernetes-sigs/kro").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("locate the kro module (go mod download): %v", err)
	}
	return dir
}

// readYAMLFile reads the objects of a YAML file of one or more documents.
func readYAMLFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func yamlStream(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var docs []string
	for _, u := range objs {
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	return strings.Join(docs, "---\n")
}
