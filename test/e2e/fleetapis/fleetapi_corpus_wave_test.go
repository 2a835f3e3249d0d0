package fleetapis

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// corpusWave is one wave of the corpus on the fleet: its cases, and what the steps learn.
type corpusWave struct {
	t         *testing.T
	fleet     *localfleet.Fleet
	hubKC     string
	cases     []*loadedCase
	resources map[string][]string                   // spoke -> instance resources, for kubectl get
	instances map[string]*unstructured.Unstructured // kind/namespace/name -> the spoke's instance
	uids      map[string]*loadedCase                // instance uid -> its case
}

// runCorpusWave creates every instance of cases at once, waits for all of them together, checks
// them, then deletes them all and waits for their children to go.
func runCorpusWave(t *testing.T, fleet *localfleet.Fleet, hubKC string, cases []*loadedCase) {
	t.Helper()
	w := &corpusWave{t: t, fleet: fleet, hubKC: hubKC, cases: cases, resources: map[string][]string{},
		instances: map[string]*unstructured.Unstructured{}, uids: map[string]*loadedCase{}}
	w.create()
	created := time.Now()
	w.waitSettled()
	t.Logf("every instance settled %s after its creation", time.Since(created).Round(100*time.Millisecond))
	w.checkChildren()
	w.checkAsserts()
	w.checkHubCounts()
	// Settled, the fleet goes quiet: Flotilla writes nothing more to the spokes.
	waitQuiet(t, fleet, 5*time.Second)
	w.deleteAll()
	w.checkRefusedNeverWritten()
}

func (w *corpusWave) kc(spoke string) string { return w.fleet.Plane(spoke).KubeconfigPath() }

// create creates, on each spoke, its cases' namespaces, prerequisites and instances, with one
// kubectl create.
func (w *corpusWave) create() {
	t := w.t
	for _, spoke := range corpusSpokes {
		var objs []*unstructured.Unstructured
		namespaces := map[string]bool{"default": true}
		for _, c := range w.cases {
			if c.spoke != spoke {
				continue
			}
			if !slices.Contains(w.resources[spoke], c.resource) {
				w.resources[spoke] = append(w.resources[spoke], c.resource)
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
			if c.serviceIPAt != "" {
				w.setServiceIP(c, spoke)
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
		mustKubectl(t, w.kc(spoke), "create", "-f", file)
	}
}

// setServiceIP gives the case's instances, at spec.<serviceIPAt>, clusterIP and clusterIPs of
// an address of the spoke's Service network: the /16 its API server's own Service (kubernetes,
// in default) is in, host 123.45 as in kro's default address.
func (w *corpusWave) setServiceIP(c *loadedCase, spoke string) {
	t := w.t
	out, err := kubectlStdout(t, w.kc(spoke), "get", "service", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		t.Fatal(err)
	}
	octets := strings.Split(strings.TrimSpace(out), ".")
	if len(octets) != 4 {
		t.Fatalf("%s: the kubernetes Service's address %q", spoke, out)
	}
	ip := octets[0] + "." + octets[1] + ".123.45"
	path := append([]string{"spec"}, strings.Split(c.serviceIPAt, ".")...)
	for _, u := range c.objs {
		if err := unstructured.SetNestedField(u.Object, ip, append(path, "clusterIP")...); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedStringSlice(u.Object, []string{ip}, append(path, "clusterIPs")...); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *corpusWave) waitSettled() {
	t := w.t
	// Every instance ACTIVE (ERROR for the refused), with its status and spec fields.
	fleettest.Eventually(t, 3*time.Minute, "every instance ACTIVE, or refused", func() error {
		for _, spoke := range corpusSpokes {
			if len(w.resources[spoke]) == 0 {
				continue
			}
			items, err := kubectlList(t, w.kc(spoke), "get", strings.Join(w.resources[spoke], ","), "-A")
			if err != nil {
				return err
			}
			for _, u := range items {
				w.instances[instanceKey(u)] = u
			}
		}
		var pending []string
		for _, c := range w.cases {
			for _, want := range c.objs {
				if err := c.check(w.instances[instanceKey(want)]); err != nil {
					pending = append(pending, fmt.Sprintf("%s %s on %s: %v", c.name, want.GetName(), c.spoke, err))
				}
			}
			if c.brokenObj != nil {
				if err := c.checkBroken(w.instances[instanceKey(c.brokenObj)]); err != nil {
					pending = append(pending, fmt.Sprintf("%s broken %s on %s: %v", c.name, c.brokenObj.GetName(), c.spoke, err))
				}
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d not there yet:\n  %s", len(pending), strings.Join(pending, "\n  "))
		}
		return nil
	})
	for _, c := range w.cases {
		if c.refused != nil {
			for _, want := range c.objs {
				t.Logf("%s, refused: %s", c.name, conditionMessages(w.instances[instanceKey(want)]))
			}
		}
	}

}

func (w *corpusWave) checkChildren() {
	t := w.t
	// The children: on the instance's spoke, exactly those expected, and nowhere else.
	for _, c := range w.cases {
		for _, want := range c.objs {
			w.uids[string(w.instances[instanceKey(want)].GetUID())] = c
		}
		if c.brokenObj != nil {
			w.uids[string(w.instances[instanceKey(c.brokenObj)].GetUID())] = c
		}
	}
	fleettest.Eventually(t, 30*time.Second, "every child on its instance's spoke only", func() error {
		var problems []string
		for _, spoke := range corpusSpokes {
			children, err := kubectlList(t, w.kc(spoke), "get", childKinds, "-A", "-l", "kro.run/instance-id")
			if err != nil {
				return err
			}
			w.adoptChained(children)
			found := map[*loadedCase][]*unstructured.Unstructured{}
			for _, child := range children {
				if c := w.uids[child.GetLabels()["kro.run/instance-id"]]; c != nil {
					found[c] = append(found[c], child)
				}
			}
			for _, c := range w.cases {
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

}

// adoptChained makes the children of the instances a case's instances make (the Tenant's
// TenantEnvironment and TenantApplication) the case's, down the chain.
func (w *corpusWave) adoptChained(children []*unstructured.Unstructured) {
	for adopted := true; adopted; {
		adopted = false
		for _, child := range children {
			c := w.uids[child.GetLabels()["kro.run/instance-id"]]
			if c == nil || child.GroupVersionKind().Group != "kro.run" || w.uids[string(child.GetUID())] != nil {
				continue
			}
			w.uids[string(child.GetUID())] = c
			adopted = true
		}
	}
}

func (w *corpusWave) checkAsserts() {
	t := w.t
	// kro's own partial objects for the instances, their children and their CRDs; then kro's
	// updates of instances, and what they change.
	checkAsserts(t, w.fleet, w.cases, func(c *loadedCase) []string { return c.asserts })
	for _, c := range w.cases {
		if c.update != "" {
			mustKubectl(t, w.kc(c.spoke), "apply", "-n", c.namespace, "-f", filepath.Join(c.kroDir, c.update))
		}
	}
	checkAsserts(t, w.fleet, w.cases, func(c *loadedCase) []string { return c.updateAsserts })

}

func (w *corpusWave) checkHubCounts() {
	t := w.t
	// Each APIPropagation counts the fleet's instances of the APIs it serves, per API and in
	// all; a chained instance (the Tenant's) counts among its own API's.
	want := map[string]*instanceCounts{corpusFAPI: {}, corpusClusterFAPI: {}}
	perAPI := map[string]instanceCounts{}
	add := func(c *loadedCase, rgd string, n int32, isError bool) {
		fapi := c.apiPropagation()
		counts := perAPI[rgd]
		counts.Total += n
		want[fapi].Total += n
		if isError {
			counts.Error += n
			want[fapi].Error += n
		} else {
			counts.Active += n
			want[fapi].Active += n
		}
		perAPI[rgd] = counts
	}
	for _, c := range w.cases {
		add(c, c.rgdName, int32(len(c.objs)), c.refused != nil)
		if c.brokenObj != nil {
			add(c, c.rgdName, 1, true)
		}
		for rgd, n := range c.chained {
			add(c, rgd, n, false)
		}
	}
	fleettest.Eventually(t, 60*time.Second, "the APIPropagations counting the fleet's instances", func() error {
		for fapi, want := range want {
			status, err := corpusStatus(t, w.hubKC, fapi)
			if err != nil {
				return err
			}
			if status.Instances == nil || *status.Instances != *want {
				return fmt.Errorf("%s status.instances %+v, want %+v", fapi, status.Instances, *want)
			}
			for name, counts := range perAPI {
				i := slices.IndexFunc(status.APIs, func(a apiStatus) bool { return a.Name == name })
				if i < 0 {
					continue // the other APIPropagation's
				}
				if got := status.APIs[i].Instances; got == nil || *got != counts {
					return fmt.Errorf("%s status.apis[%s].instances %+v, want %+v", fapi, name, got, counts)
				}
			}
		}
		for _, c := range w.cases {
			status, err := corpusStatus(t, w.hubKC, c.apiPropagation())
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(status.APIs, func(a apiStatus) bool { return a.Name == c.rgdName }) {
				return fmt.Errorf("%s status.apis lacks %s", c.apiPropagation(), c.rgdName)
			}
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
}

func (w *corpusWave) deleteAll() {
	t := w.t
	// Deleted, the instances take their children with them.
	for _, spoke := range corpusSpokes {
		if len(w.resources[spoke]) > 0 {
			mustKubectl(t, w.kc(spoke), "delete", strings.Join(w.resources[spoke], ","), "--all", "-A", "--wait=false")
		}
	}
	fleettest.Eventually(t, 2*time.Minute, "every instance and child gone", func() error {
		var left []string
		for _, spoke := range corpusSpokes {
			if len(w.resources[spoke]) > 0 {
				items, err := kubectlList(t, w.kc(spoke), "get", strings.Join(w.resources[spoke], ","), "-A")
				if err != nil {
					return err
				}
				for _, u := range items {
					left = append(left, spoke+": "+instanceKey(u)+" "+fmt.Sprint(u.Object["status"]))
				}
			}
			children, err := kubectlList(t, w.kc(spoke), "get", childKinds, "-A", "-l", "kro.run/instance-id")
			if err != nil {
				return err
			}
			for _, child := range children {
				if w.uids[child.GetLabels()["kro.run/instance-id"]] != nil {
					left = append(left, spoke+": child "+child.GetKind()+"/"+child.GetNamespace()+"/"+child.GetName())
				}
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %s", strings.Join(left, "; "))
		}
		return nil
	})

}

func (w *corpusWave) checkRefusedNeverWritten() {
	t := w.t
	// Nothing of a refused case was ever written on its spoke.
	for _, c := range w.cases {
		if c.refused == nil {
			continue
		}
		events, err := w.fleet.Plane(c.spoke).AuditEvents()
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
