package clusterwork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// MaxResultsBytes bounds the body of a post of results: counts and short messages for every
// owner of a cluster fit with room to spare; a larger body is refused (413) unread.
const MaxResultsBytes = 1 << 20

// maxResultItems bounds the results of one post.
const maxResultItems = 10000

// Reporter writes a status into a Delivery record: the ledger (ledger.Ledger.WriteReported),
// the records' only writer.
type Reporter interface {
	WriteReported(ctx context.Context, owner render.Owner, cluster string, status flotillav1.DeliveryStatus) error
}

// results serves POST /clusters/{cluster}/results: the cluster's agent reports the latest
// result of each owner it delivers, and each is written into the owner's record of that
// cluster, through the ledger, when the record is one the ledger wrote for a live owner
// (ledger.Trust), names the cluster, and still asks for the result's revision (its
// spec.work.digest). Anything else is skipped, with the reason in the answer. The objects the
// status lists are the record's own work, resolved on the hub: the agent sends counts only,
// and nothing it posts is echoed or logged but counts and record names.
func (h *Handler) results(w http.ResponseWriter, r *http.Request) {
	cluster, log, ok := h.fromAgent(w, r)
	if !ok {
		return
	}
	if h.Reports == nil {
		refuse(w, log, http.StatusServiceUnavailable, "this hub takes no results (no ledger)")
		return
	}
	var in Results
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxResultsBytes)).Decode(&in); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			refuse(w, log, http.StatusRequestEntityTooLarge, fmt.Sprintf("results are at most %d bytes", MaxResultsBytes))
			return
		}
		refuse(w, log, http.StatusBadRequest, "the body is not results (JSON)")
		return
	}
	if len(in.Items) > maxResultItems {
		refuse(w, log, http.StatusBadRequest, fmt.Sprintf("at most %d results in one post", maxResultItems))
		return
	}
	ctx := r.Context()
	records, err := h.records(ctx, cluster)
	if err != nil {
		log.Error(err, "Cannot list the cluster's records")
		http.Error(w, "the hub cannot list the cluster's records now; retry", http.StatusServiceUnavailable)
		return
	}
	byName := make(map[string]*flotillav1.Delivery, len(records))
	for i := range records {
		byName[records[i].Namespace+"/"+records[i].Name] = &records[i]
	}
	out := Written{Skipped: map[string]string{}}
	failed := false
	for _, res := range in.Items {
		rec := byName[res.Record]
		if why := h.skip(rec, res, cluster); why != "" {
			out.Skipped[res.Record] = why
			continue
		}
		owner := ledger.OwnerOf(rec.Spec.Owner)
		objs, err := h.Revisions.Work(ctx, owner, *rec.Spec.Work)
		if err != nil {
			out.Skipped[res.Record] = "the record's work cannot be resolved now; post again"
			failed = true
			continue
		}
		status := res.status(rec.Status, objs)
		if err := h.Reports.WriteReported(ctx, owner, cluster, status); err != nil {
			log.Error(err, "Cannot write a reported result", "record", res.Record)
			out.Skipped[res.Record] = "the hub cannot write the record now; post again"
			failed = true
			continue
		}
		out.Written++
		if h.Notify != nil {
			h.Notify(owner) // its controller counts the cluster from the record
		}
	}
	log.V(1).Info("Results taken", "results", len(in.Items), "written", out.Written, "skipped", len(out.Skipped))
	w.Header().Set("Content-Type", "application/json")
	if failed {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// skip says why a result is not written into rec ("" when it is).
func (h *Handler) skip(rec *flotillav1.Delivery, res Result, cluster string) string {
	switch {
	case rec == nil:
		return fmt.Sprintf("not a Delivery record the hub trusts for cluster %s", cluster)
	case rec.Spec.Work == nil || rec.Spec.Work.Digest == "":
		return "the record asks for no work"
	case rec.Spec.Work.Digest != res.Revision:
		return fmt.Sprintf("stale: the record asks for revision %s now", rec.Spec.Work.Digest)
	case res.Applied < 0 || res.Ready < 0 || res.Failed < 0 || res.Drifted < 0 || res.Fighting < 0:
		return "negative counts"
	}
	return ""
}

// reasonWord is what a reported reason must be: one CamelCase word that fits status.reason.
var reasonWord = regexp.MustCompile(`^[A-Z][A-Za-z]{0,63}$`)

// status is the record's status once it takes r, its objects the record's own work: the
// reason r gives only when it is not complete and is one CamelCase word.
func (r Result) status(prev flotillav1.DeliveryStatus, objs []*unstructured.Unstructured) flotillav1.DeliveryStatus {
	status := ledger.StatusOf(prev, r.result(), objs)
	if !r.Complete && reasonWord.MatchString(r.Reason) {
		status.Reason = r.Reason
	}
	return status
}

// result is the deliver.Result the ledger's StatusOf reads.
func (r Result) result() deliver.Result {
	return deliver.Result{Revision: r.Revision, Complete: r.Complete, Applied: r.Applied, Ready: r.Ready, Failed: r.Failed,
		Drifted: r.Drifted, Fighting: r.Fighting, Message: r.Message}
}
