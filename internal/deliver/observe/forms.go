package observe

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// serverForm is what a cluster stores when Flotilla applies one desired object, limited to the
// fields that object sets. It differs from the desired object where admission (a mutating
// webhook or admission policy) or the API server itself changes a field Flotilla sends: an
// object holding the server form is as Flotilla applied it, and applying again would store the
// same, so it is not drift and is not written.
//
// A form is learnt by a dry run the first time an object of a given desired hash looks
// drifted, and kept until the hash changes: nothing is read on the apply path, where a bulk
// delivery would decode a thousand answers per cluster to find, nearly always, the desired
// object again.
type serverForm struct {
	owner  render.Owner
	hash   string         // the desired object's hash
	object map[string]any // nil when the server stores the desired object as it is
}

// minFormSweep is the fewest forms worth a sweep.
const minFormSweep = 64

// Expected returns what a live object must hold where desired sets something: the server
// form of desired when it differs, else desired itself.
func (c *Cluster) Expected(key string, desired *unstructured.Unstructured) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expectedLocked(key, desired)
}

func (c *Cluster) expectedLocked(key string, desired *unstructured.Unstructured) map[string]any {
	if f, ok := c.forms[key]; ok && f.object != nil && f.hash == render.HashOf(desired) {
		return f.object
	}
	return desired.Object
}

// KnownForm returns the server form of the desired object with this key and hash, if learnt.
func (c *Cluster) KnownForm(key string, desired *unstructured.Unstructured) (map[string]any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.forms[key]
	if !ok || f.hash != render.HashOf(desired) {
		return nil, false
	}
	if f.object == nil {
		return desired.Object, true
	}
	return f.object, true
}

// LearnForm remembers what the cluster would store for desired (stored: a dry run's answer)
// and returns the server form. Forms of objects no longer delivered as they were are forgotten
// now and then (wanted tells), at a constant cost per form learnt.
func (c *Cluster) LearnForm(owner render.Owner, key string, desired *unstructured.Unstructured, stored map[string]any, ignore [][]string, wanted Wanted) map[string]any {
	f := serverForm{owner: owner, hash: render.HashOf(desired)}
	form := desired.Object
	if drift.Compare(desired.Object, stored, ignore) != nil {
		f.object = drift.Project(desired.Object, stored)
		form = f.object
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forms == nil {
		c.forms = map[string]serverForm{}
	}
	c.forms[key] = f
	if len(c.forms) >= max(c.formSweep, minFormSweep) {
		for k, f := range c.forms {
			if hash, ok := wanted(f.owner, k); !ok || hash != f.hash {
				delete(c.forms, k)
			}
		}
		c.formSweep = 2 * len(c.forms)
	}
	return form
}
