package instances

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// Bounds of what Counts names: the hub shows them in a status, which must stay small.
const (
	// MaxNotReady is how many not-ready instances Counts names, at most.
	MaxNotReady = 5
	// maxNotReadyMessage bounds the message of a not-ready instance, in bytes.
	maxNotReadyMessage = 256
	// maxNotReadyReason bounds the reason of a not-ready instance, in bytes.
	maxNotReadyReason = 64
)

// Counts is how the instances of one kind on one cluster are doing, by kro state. An instance
// without a state yet (not looked at so far) counts as in progress; one in a state kro does not
// define counts in Total only.
type Counts struct {
	Total, Active, InProgress, Error, Deleting int
	// NotReady names the first instances, by namespace and name, that are not ACTIVE, at most
	// MaxNotReady.
	NotReady []NotReady
}

// NotReady is an instance that is not ACTIVE, and why, from its Ready condition.
type NotReady struct {
	Namespace, Name string
	State           string
	Reason, Message string
}

// summary is what Counts takes of one instance: a change of it is a change of the counts.
type summary struct {
	state, reason, message string
}

func summarize(u *unstructured.Unstructured) summary {
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	if state == "" {
		state = kro.StateInProgress
	}
	s := summary{state: state}
	if state == kro.StateActive {
		return s
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conditions {
		c, ok := raw.(map[string]any)
		if !ok || c["status"] == "True" {
			continue
		}
		reason, _ := c["reason"].(string)
		message, _ := c["message"].(string)
		if s.reason == "" || c["type"] == "Ready" {
			s.reason, s.message = reason, message
		}
		if c["type"] == "Ready" {
			break
		}
	}
	s.reason, s.message = truncate(s.reason, maxNotReadyReason), truncate(s.message, maxNotReadyMessage)
	return s
}

// count computes the Counts of a kind's instances.
func count(objs []any) Counts {
	var out Counts
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		out.Total++
		s := summarize(u)
		switch s.state {
		case kro.StateActive:
			out.Active++
			continue
		case kro.StateInProgress:
			out.InProgress++
		case kro.StateError:
			out.Error++
		case kro.StateDeleting:
			out.Deleting++
		}
		out.NotReady = append(out.NotReady, NotReady{Namespace: u.GetNamespace(), Name: u.GetName(), State: s.state, Reason: s.reason, Message: s.message})
	}
	sort.Slice(out.NotReady, func(i, j int) bool {
		a, b := out.NotReady[i], out.NotReady[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	if len(out.NotReady) > MaxNotReady {
		out.NotReady = out.NotReady[:MaxNotReady]
	}
	return out
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// Counts returns how the instances of a kind on a cluster are doing, read from the informer
// that watches them: no API request. ok is false when they are not known now: the kind is
// not watched there (not served, or the cluster not engaged) or its informer has not synced.
func (c *Controller) Counts(cluster string, kind schema.GroupVersionKind) (Counts, bool) {
	s := c.spoke(cluster)
	if s == nil {
		return Counts{}, false
	}
	s.mu.Lock()
	kw := s.kinds[kind]
	s.mu.Unlock()
	if kw == nil || !kw.informer.HasSynced() {
		return Counts{}, false
	}
	return count(kw.informer.GetStore().List()), true
}

// SubscribeCounts registers fn, called with a cluster and a kind whenever what Counts returns
// for them may have changed: an instance appeared, went, or changed state or reason, or the
// kind's informer synced or stopped. It is called on every such event, from informer
// goroutines: fn must not block, and should coalesce.
func (c *Controller) SubscribeCounts(fn func(cluster string, kind schema.GroupVersionKind)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.countSubscribers = append(c.countSubscribers, fn)
}

func (c *Controller) countsChanged(cluster string, kind schema.GroupVersionKind) {
	c.mu.Lock()
	subscribers := append([]func(string, schema.GroupVersionKind){}, c.countSubscribers...)
	c.mu.Unlock()
	for _, fn := range subscribers {
		fn(cluster, kind)
	}
}
