package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func item(name string) clusterwork.Item {
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("team")
	cm.SetName(name)
	return clusterwork.Item{Owner: flotillav1.DeliveryOwner{APIVersion: flotillav1.GroupVersion.String(), Kind: "Propagation", Namespace: "team", Name: name},
		Record: "team/propagation." + name + ".edge", Revision: name + "-1", Digest: "digest-" + name, Objects: []*unstructured.Unstructured{cm}}
}

func ownerOf(i clusterwork.Item) render.Owner { return ledger.OwnerOf(i.Owner) }

// TestBookRemovesOnlyAfterTheGrace: an owner a successful answer leaves out is removed only
// when a successful answer (200 or 304) at least the grace later still leaves it out; one that
// comes back in between, or whose work is pending, is kept.
func TestBookRemovesOnlyAfterTheGrace(t *testing.T) {
	b := newBook("edge", time.Minute)
	t0 := time.Unix(1000, 0)
	a, c := item("a"), item("c")
	submit, remove, _ := b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{a, c}}, t0)
	if len(submit) != 2 || len(remove) != 0 {
		t.Fatalf("first answer: %d submitted, %d removed", len(submit), len(remove))
	}
	if j := submit[0]; j.Revision != a.Digest || !j.Prune || j.Cluster != "edge" || len(j.PruneKinds) != 1 {
		t.Errorf("job %+v", j)
	}
	// a is left out; c's work is pending (the hub cannot resolve it now): c stays.
	pending := c
	pending.Objects, pending.Pending = nil, "cannot be resolved now"
	if _, remove, _ := b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{pending}}, t0); len(remove) != 0 {
		t.Fatalf("removed at once: %v", remove)
	}
	if remove := b.unchanged(t0.Add(59 * time.Second)); len(remove) != 0 {
		t.Fatalf("removed before the grace: %v", remove)
	}
	// a comes back, and goes again: the grace starts again.
	b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{a, pending}}, t0.Add(59*time.Second))
	b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{pending}}, t0.Add(60*time.Second))
	if remove := b.unchanged(t0.Add(119 * time.Second)); len(remove) != 0 {
		t.Fatalf("the grace did not start again: %v", remove)
	}
	remove = b.unchanged(t0.Add(120 * time.Second))
	if len(remove) != 1 || remove[0].Owner != ownerOf(a) || remove[0].Revision != removalRevision || !remove[0].Prune ||
		len(remove[0].Objects) != 0 || len(remove[0].PruneKinds) != 1 {
		t.Fatalf("removal after the grace: %+v", remove)
	}
	if again := b.unchanged(t0.Add(time.Hour)); len(again) != 0 {
		t.Errorf("removal submitted twice: %v", again)
	}
	if h := b.owners[ownerOf(c)]; h == nil || h.removing {
		t.Errorf("the pending owner is not kept: %+v", h)
	}
}

// TestFailedRequestsRemoveNothing: the agent's poll against a hub that answers once, then
// fails for longer than the grace in every way (no answer, errors, an answer that does not
// decode), leaves every owner delivered and submits no removal; a successful answer that
// leaves the owner out starts the grace only then.
func TestFailedRequestsRemoveNothing(t *testing.T) {
	var mu sync.Mutex
	answer := func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{item("a")}})
	}
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, r.Header.Get("Authorization"))
		answer(w, r)
	}))
	defer srv.Close()
	set := func(h func(http.ResponseWriter, *http.Request)) {
		mu.Lock()
		answer = h
		mu.Unlock()
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hub, err := newHubClient(srv.URL, "edge", tokenFile, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem, _, err := openMemory(ctx, fake.NewClientset(), DefaultNamespace, "edge")
	if err != nil {
		t.Fatal(err)
	}
	events := record.NewFakeRecorder(10)
	a := &Agent{opts: Options{Cluster: "edge", RemovalGrace: time.Nanosecond}, hub: hub, book: newBook("edge", time.Nanosecond),
		mem: mem, hubOK: &contact{recorder: events, about: &corev1.ObjectReference{Kind: "ConfigMap"}},
		log: logr.Discard(), wake: make(chan struct{}, 1), sent: map[string]clusterwork.Result{}}
	a.d = deliver.New(ctx, func(render.Owner) {}, deliver.Options{})
	a.poll(ctx)
	owner := ownerOf(item("a"))
	if h := a.book.owners[owner]; h == nil || h.job.Revision != "digest-a" {
		t.Fatalf("the first answer was not taken: %+v", h)
	}
	// The token file is read for every request: a rotated token is used at once.
	if err := os.WriteFile(tokenFile, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []func(http.ResponseWriter, *http.Request){
		func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) },
		func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusUnauthorized) },
		func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{not json")) },
		func(w http.ResponseWriter, _ *http.Request) {
			_ = json.NewEncoder(w).Encode(clusterwork.Work{Cluster: "another"}) // not this cluster's answer
		},
		func(w http.ResponseWriter, _ *http.Request) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
		},
	} {
		set(fail)
		for range 3 {
			a.poll(ctx)
		}
		if h := a.book.owners[owner]; h == nil || h.removing || !h.missing.IsZero() {
			t.Fatalf("a failed request touched the owner: %+v", h)
		}
		if a.away == "" {
			t.Error("the agent did not notice the hub is away")
		}
	}
	// The hub going away is said once on the spoke, however long it stays away.
	if got := drain(events.Events); len(got) != 1 || !strings.HasPrefix(got[0], "Warning "+ReasonHubUnreachable+" ") {
		t.Errorf("events while the hub is away: %q", got)
	}
	mu.Lock()
	if last := tokens[len(tokens)-1]; last != "Bearer two" {
		t.Errorf("rotated token not used: %q", last)
	}
	mu.Unlock()
	// A successful answer without the owner: the grace (1ns here) starts, and the next
	// successful answer removes it.
	set(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("ETag", `"empty"`)
		_ = json.NewEncoder(w).Encode(clusterwork.Work{Cluster: "edge"})
	})
	a.poll(ctx)
	if a.away != "" {
		t.Error("the hub answers again, and the agent still thinks it away")
	}
	if got := drain(events.Events); len(got) != 1 || !strings.HasPrefix(got[0], "Normal "+ReasonHubReachable+" ") {
		t.Errorf("events when the hub answers again: %q", got)
	}
	if h := a.book.owners[owner]; h == nil || h.missing.IsZero() {
		t.Fatalf("a successful answer without the owner did not start its grace: %+v", h)
	}
	a.poll(ctx) // a request later: past the 1ns grace
	if h := a.book.owners[owner]; h == nil || !h.removing {
		t.Fatalf("the owner was not removed after its grace: %+v", h)
	}
}

// drain returns the events recorded so far.
func drain(events chan string) []string {
	var out []string
	for {
		select {
		case e := <-events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestBookRecallsWhatAnEarlierAgentDelivered: owners read back from the spoke at start are
// held with their kinds; one the first successful answer lists is delivered pruning the
// remembered kinds too, one it leaves out is removed after the grace, over its remembered
// kinds and with its deletion policy, and an owner that never delivered a kind is not
// remembered.
func TestBookRecallsWhatAnEarlierAgentDelivered(t *testing.T) {
	a, gone := item("a"), item("gone")
	earlier := newBook("edge", time.Minute)
	t0 := time.Unix(1000, 0)
	gone.Strategy = &flotillav1.PropagationStrategy{Deletion: flotillav1.DeletionOrphan}
	secret := &unstructured.Unstructured{}
	secret.SetAPIVersion("v1")
	secret.SetKind("Secret")
	withSecret := a
	withSecret.Objects = append([]*unstructured.Unstructured{secret}, a.Objects...)
	pending := item("pending")
	pending.Objects, pending.Pending = nil, "no work yet"
	earlier.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{withSecret, gone, pending}}, t0)
	kept := earlier.remember()
	if len(kept) != 2 || len(kept[ownerOf(a)].Kinds) != 2 || kept[ownerOf(gone)].Deletion != flotillav1.DeletionOrphan {
		t.Fatalf("remembered %+v", kept)
	}
	text, err := formatMemory(kept)
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseMemory(text)
	if err != nil || !reflect.DeepEqual(back, kept) {
		t.Fatalf("read back %+v (%v), want %+v", back, err, kept)
	}

	// A new agent: the hub now lists a without its Secret, and no longer lists gone.
	b := newBook("edge", time.Minute)
	b.recall(back)
	submit, remove, _ := b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{a}}, t0.Add(time.Hour))
	if len(submit) != 1 || len(remove) != 0 || len(submit[0].PruneKinds) != 2 {
		t.Fatalf("first answer: submitted %+v, removed %+v", submit, remove)
	}
	if r := b.unchanged(t0.Add(time.Hour + 59*time.Second)); len(r) != 0 {
		t.Fatalf("removed before the grace: %+v", r)
	}
	r := b.unchanged(t0.Add(time.Hour + time.Minute))
	if len(r) != 1 || r[0].Owner != ownerOf(gone) || r[0].Strategy.Deletion != flotillav1.DeletionOrphan || len(r[0].PruneKinds) != 1 {
		t.Fatalf("removal after the grace: %+v", r)
	}
	if _, err := parseMemory(`{"not an owner": {}}`); err == nil {
		t.Error("a memory naming no owner was read")
	}
}

// TestMemoryOnTheSpoke: the agent's ConfigMap is created with its namespace, written only when
// what it holds changes, read back by the next agent, and refused when another cluster's agent
// keeps it.
func TestMemoryOnTheSpoke(t *testing.T) {
	ctx := context.Background()
	spoke := fake.NewClientset()
	mem, owners, err := openMemory(ctx, spoke, DefaultNamespace, "edge")
	if err != nil || len(owners) != 0 {
		t.Fatalf("first start: %v, %v", owners, err)
	}
	if _, err := spoke.CoreV1().Namespaces().Get(ctx, DefaultNamespace, metav1.GetOptions{}); err != nil {
		t.Fatalf("the namespace was not created: %v", err)
	}
	b := newBook("edge", time.Minute)
	b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{item("a")}}, time.Now())
	writes := func() int {
		n := 0
		for _, a := range spoke.Actions() {
			if a.GetVerb() == "update" && a.GetResource().Resource == "configmaps" {
				n++
			}
		}
		return n
	}
	for range 3 {
		if err := mem.save(ctx, b.remember()); err != nil {
			t.Fatal(err)
		}
	}
	if n := writes(); n != 1 {
		t.Errorf("%d writes of the same memory, want 1", n)
	}
	_, owners, err = openMemory(ctx, spoke, DefaultNamespace, "edge")
	if err != nil || !reflect.DeepEqual(owners, b.remember()) {
		t.Fatalf("read back %+v (%v), want %+v", owners, err, b.remember())
	}
	if _, _, err := openMemory(ctx, spoke, DefaultNamespace, "other"); err == nil || !strings.Contains(err.Error(), "another agent") {
		t.Errorf("another cluster's memory was taken: %v", err)
	}
}
