package clusterwork

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/work"
)

// Handler serves GET /clusters/{cluster}/work and POST /clusters/{cluster}/results (see the
// package documentation).
type Handler struct {
	// Hub reads Delivery records and their owners: the hub cache.
	Hub client.Reader
	// Owners are the kinds records may belong to (ledger.Trust).
	Owners ledger.Owners
	// Revisions resolves a record's work into objects.
	Revisions *revisions.Store
	// Authenticator says who a request comes from (NewAuthenticator).
	Authenticator authenticator.Request
	// Log gets one line per request: cluster, caller, status and counts, never objects.
	Log logr.Logger
	// Reports writes the results agents post into records (POST .../results; nil refuses
	// them): the ledger.
	Reports Reporter
	// Changes, when set, lets a request that asks to wait (?waitSeconds=N) be held until one of
	// its cluster's records changes (changes.go).
	Changes *Changes
	// Notify, when set, is told of each owner whose record took a result, so that its
	// controller counts the cluster's new state (the ledger's writes trigger no reconcile).
	Notify func(render.Owner)
	// Policies reads the Delivery policy and its binding (an uncached reader: one look per
	// ProtectionInterval); nil reads them with Hub.
	Policies client.Reader
	// ProtectionInterval is how long a look at the Delivery policy is believed; 0 is
	// ProtectionInterval.
	ProtectionInterval time.Duration
	// Accounts reads the agents' ServiceAccounts (an uncached reader: one look per cluster per
	// CacheTTL); nil reads them with Hub.
	Accounts client.Reader
	// MaxInFlight bounds the requests served at once (each may cost a TokenReview); more are
	// answered 429 with Retry-After. 0 is DefaultMaxInFlight.
	MaxInFlight int

	protection protection
	accounts   accounts
	inFlight   chan struct{}
	once       sync.Once
}

// Routes returns the endpoint's routes.
func (h *Handler) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /clusters/{cluster}/work", h.work)
	mux.HandleFunc("POST /clusters/{cluster}/results", h.results)
	return h.limited(mux)
}

func (h *Handler) work(w http.ResponseWriter, r *http.Request) {
	cluster, log, ok := h.fromAgent(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	if msg := h.unprotected(ctx); msg != "" {
		refuse(w, log, http.StatusServiceUnavailable, msg)
		return
	}
	wait, err := waitOf(r)
	if err != nil {
		refuse(w, log, http.StatusBadRequest, err.Error())
		return
	}
	deadline := time.Now().Add(wait)
	var records []flotillav1.Delivery
	var confirmed map[string]string
	var etag string
	for {
		// Held before the records are read, so that a change made while they are read wakes it.
		var changed <-chan struct{}
		done := func() {}
		if wait > 0 && h.Changes != nil {
			var held bool
			if changed, done, held = h.Changes.hold(cluster); !held {
				changed, done = nil, func() {}
			}
		}
		records, err = h.records(ctx, cluster)
		if err != nil {
			done()
			log.Error(err, "Cannot list the cluster's work")
			http.Error(w, "the hub cannot list the cluster's work now; retry", http.StatusServiceUnavailable)
			return
		}
		confirmed = h.confirmations(ctx, records)
		etag = etagOf(cluster, records, confirmed)
		if !matches(r.Header.Get("If-None-Match"), etag) || changed == nil || time.Until(deadline) <= 0 {
			done()
			break
		}
		woke := await(ctx, changed, time.Until(deadline))
		done()
		if ctx.Err() != nil {
			return
		}
		if !woke {
			break
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.Header().Set("ETag", etag)
		w.WriteHeader(http.StatusNotModified)
		log.V(1).Info("Work not modified", "records", len(records))
		return
	}
	out := Work{Cluster: cluster, Items: make([]Item, 0, len(records))}
	resolved, refused := true, 0
	for i := range records {
		item, final := h.item(ctx, &records[i])
		resolved = resolved && (item.Pending == "" || final)
		if errors.Is(item.err, work.ErrNotConfined) {
			refused++
			log.Info("Delivery record ignored", "record", item.Record, "reason", item.Pending)
		}
		item.PruneConfirmed = confirmed[item.Record]
		out.Items = append(out.Items, item.Item)
	}
	ledger.CountIgnored(ledger.ReaderAgent, refused)
	if resolved {
		w.Header().Set("ETag", etag)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		log.V(1).Info("Work not sent whole", "reason", err.Error())
		return
	}
	log.V(1).Info("Work served", "records", len(records), "resolved", resolved)
}

// fromAgent returns the cluster a request names and a logger for it, when the request comes
// from that cluster's agent; otherwise it has answered the refusal, and ok is false.
func (h *Handler) fromAgent(w http.ResponseWriter, r *http.Request) (cluster string, log logr.Logger, ok bool) {
	cluster = r.PathValue("cluster")
	log = h.Log.WithValues("cluster", cluster)
	if errs := validation.IsDNS1123Label(cluster); len(errs) > 0 {
		refuse(w, log, http.StatusBadRequest, fmt.Sprintf("%q is not a cluster name (a DNS-1123 label): %s", cluster, strings.Join(errs, "; ")))
		return cluster, log, false
	}
	if fromThisProcess(r) {
		return cluster, log, true // a replica's own agent (local.go)
	}
	if status, msg := h.authorize(r, cluster); status != http.StatusOK {
		refuse(w, log, status, msg)
		return cluster, log, false
	}
	return cluster, log, true
}

// authorize returns http.StatusOK when r comes from cluster's agent, else the status and
// message to refuse it with.
func (h *Handler) authorize(r *http.Request, cluster string) (int, string) {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		return http.StatusUnauthorized, "no bearer token: the work of a cluster is served to its agent's token"
	}
	// The audience a token must have is asked for in the request's context: without it the
	// review is for the hub API server's own audiences.
	r = r.WithContext(authenticator.WithAudiences(r.Context(), authenticator.Audiences{Audience}))
	res, ok, err := h.Authenticator.AuthenticateRequest(r)
	if err != nil && reviewUnavailable(err) {
		h.Log.V(1).Info("Cannot review the agent's token", "cluster", cluster, "reason", err.Error())
		return http.StatusServiceUnavailable, "the hub cannot review tokens now (its API server does not answer); retry"
	}
	if err != nil || !ok {
		return http.StatusUnauthorized, fmt.Sprintf("the hub does not accept this token for audience %s", Audience)
	}
	if user, want := res.User.GetName(), membership.AgentUser(cluster); user != want {
		return http.StatusForbidden, fmt.Sprintf("%s may not read the work of cluster %s: it is served to the cluster's agent (%s) alone", user, cluster, want)
	}
	msg, err := h.agentAccount(r.Context(), cluster, res.User.GetUID())
	if err != nil {
		h.Log.Error(err, "Cannot check the agent's identity", "cluster", cluster)
		return http.StatusServiceUnavailable, "the hub cannot check the agent's identity now; retry"
	}
	if msg != "" {
		return http.StatusForbidden, msg
	}
	return http.StatusOK, ""
}

// records returns cluster's Delivery records that the ledger wrote for a live owner, by
// namespace and name.
func (h *Handler) records(ctx context.Context, cluster string) ([]flotillav1.Delivery, error) {
	var list flotillav1.DeliveryList
	// The label is the cluster's name, which fits a label value (a DNS-1123 label).
	if err := h.Hub.List(ctx, &list, client.MatchingLabels{flotillav1.LabelCluster: cluster}); err != nil {
		return nil, err
	}
	mine := list.Items[:0]
	for _, rec := range list.Items {
		if rec.Spec.Cluster == cluster {
			mine = append(mine, rec)
		}
	}
	trusted, ignored, err := ledger.Trust{Hub: h.Hub, Owners: h.Owners}.Owned(ctx, ledger.ReaderAgent, mine)
	if err != nil {
		return nil, err
	}
	for _, i := range ignored {
		h.Log.V(1).Info("Delivery record ignored", "cluster", cluster, "record", i.Record.String(), "reason", i.Reason)
	}
	sort.Slice(trusted, func(i, j int) bool {
		return trusted[i].Namespace+"/"+trusted[i].Name < trusted[j].Namespace+"/"+trusted[j].Name
	})
	return trusted, nil
}

// resolvedItem is an Item and, when its work is refused or unresolved, the error.
type resolvedItem struct {
	Item
	err error
}

// item is one record's work, resolved into objects; final is true when the answer holds until
// the record changes (it has no work, or its work is refused), false when it may not.
func (h *Handler) item(ctx context.Context, rec *flotillav1.Delivery) (_ resolvedItem, final bool) {
	item := resolvedItem{Item: Item{Owner: rec.Spec.Owner, Record: rec.Namespace + "/" + rec.Name,
		RecordUID: string(rec.UID), Generation: rec.Generation}}
	wk := rec.Spec.Work
	if wk == nil {
		item.Pending = "the hub has not recorded this cluster's work for the owner yet (the record has no spec.work)"
		return item, true
	}
	item.Revision, item.Digest, item.Strategy = wk.Revision, wk.Digest, wk.Strategy.DeepCopy()
	// Errors of the revision store and of changes name objects and revisions, never Secret
	// values.
	base, _, err := h.Revisions.Load(ctx, ledger.OwnerOf(rec.Spec.Owner), wk.Revision)
	if err != nil {
		item.Pending, item.err = fmt.Sprintf("revision %s cannot be resolved now: %v", wk.Revision, err), err
		return item, false
	}
	// The hub's changes only change or omit the revision's objects: a record whose changes
	// would add one was not written by the hub controller, and is not served.
	if err := work.Confined(base, wk.Changes); err != nil {
		item.Pending, item.err = fmt.Sprintf("not served: %v; the hub controller writes no such record", err), err
		return item, true
	}
	objs, err := revisions.Resolve(base, *wk)
	if err != nil {
		item.Pending, item.err = fmt.Sprintf("revision %s cannot be resolved now: %v", wk.Revision, err), err
		return item, false
	}
	item.Objects = objs
	return item, true
}

// etagOf is a strong entity tag over the records served: their identities and generations,
// which change with their specs (spec.work among them) and not with their status, and the
// prune confirmations of their owners (confirm.go).
func etagOf(cluster string, records []flotillav1.Delivery, confirmed map[string]string) string {
	h := sha256.New()
	h.Write([]byte(cluster))
	for _, rec := range records {
		h.Write([]byte("\x00" + string(rec.UID) + "\x00" + strconv.FormatInt(rec.Generation, 10)))
		if v, ok := confirmed[rec.Namespace+"/"+rec.Name]; ok {
			h.Write([]byte("\x00confirmed\x00" + v))
		}
	}
	return `"` + hex.EncodeToString(h.Sum(nil))[:32] + `"`
}

// matches tells whether an If-None-Match header names etag (or is "*"), comparing weakly as
// RFC 9110 says for If-None-Match.
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// refuse answers with status and msg, which names no object's content.
func refuse(w http.ResponseWriter, log logr.Logger, status int, msg string) {
	log.V(1).Info("Work refused", "status", status, "reason", msg)
	http.Error(w, msg, status)
}
