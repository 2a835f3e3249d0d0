package observe

import (
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

var web = render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}

func configMap(hash string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": data}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("team")
	u.SetName("settings")
	u.SetAnnotations(map[string]string{flotillav1.AnnotationHash: hash})
	return u
}

func deployment(generation, observed int64, available bool) *unstructured.Unstructured {
	status := "False"
	if available {
		status = "True"
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"replicas": int64(2)},
		"status": map[string]any{
			"observedGeneration": observed, "replicas": int64(2), "updatedReplicas": int64(2),
			"readyReplicas": int64(2), "availableReplicas": int64(2),
			"conditions": []any{map[string]any{"type": "Available", "status": status}},
		},
	}}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("team")
	u.SetName("web")
	u.SetGeneration(generation)
	u.SetAnnotations(map[string]string{flotillav1.AnnotationHash: "h1"})
	return u
}

func TestChangedSaysWhatNeedsAnotherLook(t *testing.T) {
	desired := configMap("h1", map[string]any{"a": "1"})
	key := render.Key(desired)
	confirmed := func(drifted map[string]Drift, ready bool) *Confirmed {
		v := NewConfirmed()
		v.Hashes[key] = "h1"
		v.Ready[key] = ready
		for k, d := range drifted {
			v.Drifted[k] = d
		}
		return v
	}
	tests := []struct {
		name      string
		confirmed *Confirmed
		live      *unstructured.Unstructured
		deleted   bool
		ignore    [][]string
		look      bool
		drifted   bool
	}{
		{"not confirmed yet: the delivery in flight decides", nil, configMap("h1", map[string]any{"a": "2"}), false, nil, false, false},
		{"as applied, ready as before", confirmed(nil, true), configMap("h1", map[string]any{"a": "1"}), false, nil, false, false},
		{"as applied, and now ready", confirmed(nil, false), configMap("h1", map[string]any{"a": "1"}), false, nil, true, false},
		{"changed", confirmed(nil, true), configMap("h1", map[string]any{"a": "2"}), false, nil, true, true},
		{"changed where ignored", confirmed(nil, true), configMap("h1", map[string]any{"a": "2"}), false, [][]string{{"data", "a"}}, false, false},
		{"deleted", confirmed(nil, true), configMap("h1", nil), true, nil, true, true},
		{"drift already recorded, the same fields", confirmed(map[string]Drift{key: {Fields: []string{"/data/a"}}}, true), configMap("h1", map[string]any{"a": "3"}), false, nil, false, false},
		{"drift recorded, now undone", confirmed(map[string]Drift{key: {Fields: []string{"/data/a"}}}, true), configMap("h1", map[string]any{"a": "1"}), false, nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{}
			c.Confirm(web, tt.confirmed)
			c.Wrote(key, "h1", web, "")
			look, wait, drifted := c.Changed(web, key, desired, tt.live, tt.deleted, tt.ignore)
			if look != tt.look || drifted != tt.drifted {
				t.Fatalf("look, drifted = %v, %v, want %v, %v", look, drifted, tt.look, tt.drifted)
			}
			if wait != 0 {
				t.Fatalf("wait = %v for an object with no corrections", wait)
			}
			touched := c.Take(web)
			if tt.confirmed == nil {
				return
			}
			if touched.Stale[key] != tt.look {
				t.Fatalf("marked for another look: %v, want %v", touched.Stale[key], tt.look)
			}
			if tt.look && c.WroteRecently(key, "h1") {
				t.Fatal("a change seen after the write still trusts the write over the cache")
			}
		})
	}
}

// A drift that undoes a correction waits for the backoff; the one that makes it a fight is
// looked at at once (to be reported).
func TestChangedBacksOffUndoneCorrections(t *testing.T) {
	desired := configMap("h1", map[string]any{"a": "1"})
	key := render.Key(desired)
	drifted := configMap("h1", map[string]any{"a": "2"})
	c := &Cluster{}
	wanted := func(render.Owner, string) (string, bool) { return "h1", true }
	var waits []time.Duration
	for range 4 {
		v := NewConfirmed()
		v.Hashes[key] = "h1"
		c.Confirm(web, v)
		c.Corrected(web, key, "h1", &Drift{Object: "configmap team/settings", Corrected: true}, wanted)
		look, wait, _ := c.Changed(web, key, desired, drifted, false, nil)
		if !look {
			t.Fatal("an undone correction needs no look")
		}
		waits = append(waits, wait)
	}
	// The first undone correction is looked at at once, the next ones wait, and the one that
	// starts the fight (drift.FightThreshold) is looked at at once, to be reported.
	if waits[0] != 0 || waits[1] <= 0 || waits[3] <= waits[1] {
		t.Fatalf("waits %v: want none, then growing backoffs", waits)
	}
	fighting, news, _ := c.Fights(web, []Object{{Key: key, Hash: "h1"}})
	if len(fighting) != 1 || len(news) != 1 || !fighting[0].Fighting {
		t.Fatalf("after %d undone corrections: fighting %v, news %v", len(waits), fighting, news)
	}
	if _, news, _ := c.Fights(web, []Object{{Key: key, Hash: "h1"}}); len(news) != 0 {
		t.Fatal("a fight is news twice")
	}
	if fighting, _, _ := c.Fights(web, []Object{{Key: key, Hash: "h2"}}); len(fighting) != 0 {
		t.Fatal("a fight outlives a change of the desired object")
	}
}

func TestReadiness(t *testing.T) {
	cm := configMap("h1", map[string]any{"a": "1"})
	deploy := deployment(2, 2, true)
	objs := []*unstructured.Unstructured{cm, deploy}
	ids := []Object{{Key: render.Key(cm), Hash: "h1"}, {Key: render.Key(deploy), Hash: "h1"}}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "x"}, "x")
	tests := []struct {
		name  string
		live  map[string]*unstructured.Unstructured // by kind; missing: not in the cache
		err   error                                 // of reads of missing objects
		wrote map[string]string                     // recent writes: kind → hash
		ready int
		first string
	}{
		{"both ready", map[string]*unstructured.Unstructured{"ConfigMap": cm, "Deployment": deploy}, nil, nil, 2, ""},
		{"a rollout not observed", map[string]*unstructured.Unstructured{"ConfigMap": cm, "Deployment": deployment(3, 2, true)}, nil, nil, 1, "deployment.apps team/web: InProgress"},
		{"not in the cache", map[string]*unstructured.Unstructured{"ConfigMap": cm}, notFound, nil, 1, "deployment.apps team/web: not observed yet"},
		{"cannot read", map[string]*unstructured.Unstructured{"Deployment": deploy}, errors.New("boom"), nil, 1, "configmap team/settings: not observed yet"},
		{"written moments ago, not cached yet: a ConfigMap is ready as written", map[string]*unstructured.Unstructured{"Deployment": deploy}, notFound, map[string]string{"ConfigMap": "h1"}, 2, ""},
		{"written moments ago, the cache shows what was before", map[string]*unstructured.Unstructured{"ConfigMap": cm, "Deployment": deploy}, nil, map[string]string{"Deployment": "h2"}, 1, "deployment.apps team/web: the written generation is not observed yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{}
			for i, o := range objs {
				if h, ok := tt.wrote[o.GetKind()]; ok {
					c.Wrote(ids[i].Key, h, web, "")
				}
			}
			read := func(desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				if live, ok := tt.live[desired.GetKind()]; ok {
					return live, nil
				}
				return nil, tt.err
			}
			next := NewConfirmed()
			ready, first := c.Readiness(objs, ids, nil, next, read)
			if ready != tt.ready || !strings.HasPrefix(first, tt.first) || (tt.first == "") != (first == "") {
				t.Fatalf("Readiness = %d, %q; want %d, %q…", ready, first, tt.ready, tt.first)
			}
			if len(next.Ready) != tt.ready {
				t.Fatalf("%d objects recorded ready, want %d", len(next.Ready), tt.ready)
			}
			// Ready and unchanged since: not read again.
			for _, id := range ids {
				next.Hashes[id.Key] = id.Hash
			}
			again, _ := c.Readiness(objs, ids, next, NewConfirmed(), func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return nil, errors.New("read again")
			})
			if again != tt.ready {
				t.Fatalf("a second look counts %d ready without reading, want %d", again, tt.ready)
			}
		})
	}
}

// A spoke back from an outage: its cache still shows the object as it was before (the watch
// resumes only after the reflector's backoff), Ready at the generation it had then. Flotilla
// scaled the object down meanwhile and has just written it back as it was, byte for byte:
// the cache's copy carries the hash of that last write, but it is older than the write, and
// its status says nothing of the generation written. Were it taken as current, a move would
// stop holding replicas elsewhere (make before break) before the copy here is Ready.
func TestReadinessDoesNotTrustAnOlderCopyWithTheWrittenHash(t *testing.T) {
	before := deployment(2, 2, true) // what ran before the outage, as the cache still shows it
	before.SetResourceVersion("5")
	key := render.Key(before)
	c := &Cluster{}
	c.Wrote(key, "h0", web, "7") // scaled to 0 meanwhile
	c.Wrote(key, "h1", web, "9") // and back: the same object as before the outage
	objs, ids := []*unstructured.Unstructured{before}, []Object{{Key: key, Hash: "h1"}}
	read := func(*unstructured.Unstructured) (*unstructured.Unstructured, error) { return before, nil }
	ready, first := c.Readiness(objs, ids, nil, NewConfirmed(), read)
	if ready != 0 || !strings.Contains(first, "not observed yet") {
		t.Fatalf("Readiness = %d, %q; want 0, the written generation not observed yet", ready, first)
	}
	// Once the cache shows the write (or anything after it), its status is what counts.
	caught := deployment(4, 4, true)
	caught.SetResourceVersion("9")
	if ready, first := c.Readiness(objs, ids, nil, NewConfirmed(), func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return caught, nil
	}); ready != 1 {
		t.Fatalf("the cache shows the write: Readiness = %d, %q; want 1", ready, first)
	}
}
