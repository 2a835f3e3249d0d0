package deliver

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func identitiesObject(kind, apiVersion, namespace, name, hash string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace(namespace)
	o.SetName(name)
	o.SetAnnotations(map[string]string{"flotilla.dev/hash": hash})
	return o
}

// A job's identities are those it was given only when they were made of its own objects (the
// same slice): identities of other objects would name other keys, and a prune would take the
// job's objects for unwanted.
func TestJobIdentitiesAreOfItsOwnObjects(t *testing.T) {
	ns := identitiesObject("Namespace", "v1", "", "team", "h0")
	web := identitiesObject("ConfigMap", "v1", "team", "web", "h1")
	app := identitiesObject("Deployment", "apps/v1", "team", "app", "h2")
	shared := []*unstructured.Unstructured{ns, web, app}
	given := NewIdentities(shared)

	// Two clusters' jobs of one pass share the slice: both use the identities given, made once.
	a, b := Job{Objects: shared, Identities: given}, Job{Objects: shared, Identities: given}
	if a.identities() != given || b.identities() != given {
		t.Fatal("jobs of the same objects did not use the identities they were given")
	}
	got := given.made()
	if len(got.ids) != 3 || got.ids[1].key != render.Key(web) || got.ids[1].hash != render.HashOf(web) || got.ids[2].gvk.Kind != "Deployment" {
		t.Fatalf("identities %+v do not name the objects", got.ids)
	}
	if len(got.kinds) != 3 || got.observed[2].Key != render.Key(app) || got.observed[2].Hash != "h2" {
		t.Fatalf("kinds %v, observed %+v", got.kinds, got.observed)
	}
	if got.object(render.Key(web)) != web || !got.wants(render.Key(app)) || got.wants("v1/ConfigMap/team/other") {
		t.Fatal("lookup by key is wrong")
	}

	// Another slice of as many objects (a cluster's divided or overridden copy) is not
	// identified by them, though the identities are of the same length.
	other := []*unstructured.Unstructured{ns, identitiesObject("ConfigMap", "v1", "team", "api", "h3"), app}
	c := Job{Objects: other, Identities: given}
	if own := c.identities(); own == given || !own.wants(render.Key(other[1])) || own.wants(render.Key(web)) {
		t.Fatal("a job used the identities of other objects")
	}
	if none := (Job{}).identities(); len(none.ids) != 0 || none.wants("anything") {
		t.Fatal("a job without objects has identities")
	}
}
