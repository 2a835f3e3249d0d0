package inventory

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	toolscache "k8s.io/client-go/tools/cache"
)

// watchErrors is the watch error handler of one engaged spoke's cache. client-go's default
// logs every failed list or watch as an error, with a stack trace and without the cluster's
// name: a kind the spoke no longer serves (a CRD removed there, by a drain's pruning, say)
// printed "Failed to watch ... Kind=Backup" every backoff, up to every 30 s per kind, for as long
// as the spoke stayed engaged, and a spoke that does not answer printed one per kind.
//
// Here each kind's failure is logged once, with the cluster and the kind, when it starts or
// changes class, and again only after the watch has worked in between (its reflector's last
// synced resource version moved). The informer goes on retrying with client-go's backoff, quietly,
// so that its watch resumes by itself when the kind is served again or the spoke answers: the
// retry is one LIST that fails, which costs the spoke nothing.
type watchErrors struct {
	cluster string
	log     logr.Logger

	mu       sync.Mutex
	reported map[string]watchFailure // by the reflector's type description (group, version, kind)
}

// watchFailure is what was last reported of a kind's watch.
type watchFailure struct {
	class, resourceVersion string
}

func newWatchErrors(cluster string, log logr.Logger) *watchErrors {
	return &watchErrors{cluster: cluster, log: log, reported: map[string]watchFailure{}}
}

// Classes of watch failures.
const (
	watchNotServed   = "not served"
	watchRefused     = "refused"
	watchUnreachable = "unreachable"
	watchOther       = "other"
)

// classOf says which class a watch failure is of; "" for what needs no report (a watch closed
// normally or whose resource version expired: the reflector lists again).
func classOf(err error) string {
	switch {
	case err == nil, errors.Is(err, io.EOF), apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return ""
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return watchNotServed
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return watchRefused
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded), utilnet.IsConnectionRefused(err),
		utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err), utilnet.IsTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsServerTimeout(err), apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err):
		return watchUnreachable
	}
	return watchOther
}

// handle is a cache.Options.DefaultWatchErrorHandler.
func (w *watchErrors) handle(_ context.Context, r *toolscache.Reflector, err error) {
	class := classOf(err)
	if class == "" {
		return
	}
	kind := r.TypeDescription()
	now := watchFailure{class: class, resourceVersion: r.LastSyncResourceVersion()}
	w.mu.Lock()
	last, seen := w.reported[kind]
	w.reported[kind] = now
	w.mu.Unlock()
	if seen && last == now {
		w.log.V(4).Info("Watch of a kind on the spoke failed again", "cluster", w.cluster, "kind", kind, "error", err.Error())
		return
	}
	log := w.log.WithValues("cluster", w.cluster, "kind", kind, "error", err.Error())
	switch class {
	case watchNotServed:
		log.Info("The spoke does not serve a kind Flotilla watches there (a CRD removed?); its watch retries quietly and resumes once the kind is served again")
	case watchRefused:
		log.Info("The spoke refuses Flotilla's watch of a kind (check Flotilla's grant there); it retries quietly")
	case watchUnreachable:
		// The Cluster's Ready condition says so already.
		log.V(1).Info("Watch of a kind on the spoke failed: the spoke does not answer; it retries quietly")
	default:
		log.Info("Watch of a kind on the spoke failed; it retries quietly")
	}
}
