package deliver

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
)

// A delivery that fails because the spoke does not answer (its API server stopped or
// restarting) is retried with backoff like any passing failure; the backoff grows to 30 s
// over a long outage, so the spoke's return could wait that long for its deliveries. The
// inventory's probe tells the deliverer when a spoke turns Ready again (Retry), but an outage
// shorter than the probe's period is never seen by it. So the worker itself asks the spoke's
// /readyz, every answerPoll while such failures stand, and queues those jobs again the moment
// it answers ready: one cheap GET per cluster per answerPoll during an outage, none otherwise.

// answerPoll is how often a worker whose spoke did not answer asks it whether it is back;
// answerTimeout bounds one question (a spoke just started, on a busy machine, is slow to
// shake hands).
const (
	answerPoll    = 500 * time.Millisecond
	answerTimeout = 5 * time.Second
)

// unanswered reports whether err is the spoke not answering: no connection, or one dropped.
// An error the API server answers with is not, even when it names a dropped connection (a
// webhook's, an aggregated API's): /readyz would answer at once and the job be queued again
// and again.
func unanswered(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var opErr *net.OpError
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		(errors.As(err, &opErr) && opErr.Op == "dial")
}

// awaitAnswer starts, unless one runs, the worker's wait for its spoke to answer again; then
// every job whose latest result found the spoke not answering is queued at once.
func (w *clusterWorker) awaitAnswer() {
	w.mu.Lock()
	if w.awaiting {
		w.mu.Unlock()
		return
	}
	w.awaiting = true
	w.mu.Unlock()
	go func() {
		back := w.waitAnswer()
		w.mu.Lock()
		w.awaiting = false
		owners := w.unansweredLocked()
		w.mu.Unlock()
		if !back {
			return
		}
		for _, owner := range owners {
			w.queue.Forget(owner) // a fresh backoff, should it fail again
			w.queue.Add(owner)
		}
	}()
}

// unansweredLocked are the owners whose latest result found the spoke not answering; w.mu is
// held.
func (w *clusterWorker) unansweredLocked() []pairKey {
	var owners []pairKey
	for owner, res := range w.results {
		if res.Unanswered {
			owners = append(owners, owner)
		}
	}
	return owners
}

// waitAnswer asks the engaged spoke's /readyz every answerPoll until it answers ok. It reports
// true only when the spoke was away: some question went unanswered before. A spoke that
// answers the first question was not away (what failed was something else; the backoff's
// retries are for that), and the wait ends without requeueing anything; it ends so too when
// no result waits for the spoke any more, or the worker stops.
func (w *clusterWorker) waitAnswer() bool {
	tick := time.NewTicker(answerPoll)
	defer tick.Stop()
	away := false
	for {
		select {
		case <-w.ctx.Done():
			return false
		case <-tick.C:
		}
		w.mu.Lock()
		waiting := len(w.unansweredLocked()) > 0
		w.mu.Unlock()
		if !waiting {
			return false
		}
		e := w.d.engagement(w.name)
		if e == nil {
			away = true // disengaged: the inventory's engagement brings it back (Retry)
			continue
		}
		ask, err := discovery.NewDiscoveryClientForConfigAndClient(e.cl.GetConfig(), e.cl.GetHTTPClient())
		if err != nil {
			return false // cannot ask: the backoff's retries find out
		}
		ctx, cancel := context.WithTimeout(w.ctx, answerTimeout)
		body, err := ask.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return away
		}
		away = true
	}
}
