package deliver

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

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

// answerPoll is how often a worker whose spoke did not answer asks it whether it is back.
const answerPoll = 500 * time.Millisecond

// unanswered reports whether err is the spoke not answering: no connection, or one dropped.
// An error the API server answers with (a 503 of an aggregated API, a timeout of a webhook) is
// not: /readyz would answer at once and the job would be queued again every answerPoll.
func unanswered(err error) bool {
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
		answered := w.waitAnswer()
		w.mu.Lock()
		w.awaiting = false
		var owners []pairKey
		for owner, res := range w.results {
			if res.Unanswered {
				owners = append(owners, owner)
			}
		}
		w.mu.Unlock()
		if !answered {
			return
		}
		for _, owner := range owners {
			w.queue.Forget(owner) // a fresh backoff, should it fail again
			w.queue.Add(owner)
		}
	}()
}

// waitAnswer asks the engaged spoke's /readyz every answerPoll until it answers ok (true) or
// the worker stops (false).
func (w *clusterWorker) waitAnswer() bool {
	tick := time.NewTicker(answerPoll)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return false
		case <-tick.C:
		}
		e := w.d.engagement(w.name)
		if e == nil {
			continue // disengaged: the inventory's engagement brings it back (Retry)
		}
		ask, err := discovery.NewDiscoveryClientForConfigAndClient(e.cl.GetConfig(), e.cl.GetHTTPClient())
		if err != nil {
			return true // cannot ask: let the backoff's retries find out
		}
		ctx, cancel := context.WithTimeout(w.ctx, answerPoll)
		body, err := ask.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return true
		}
	}
}
