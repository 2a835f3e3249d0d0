package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/spokeclient"
)

// Defaults of Options.
const (
	DefaultPollInterval = 2 * time.Second
	DefaultRemovalGrace = 10 * time.Minute
)

// UserAgent identifies the agent's requests in the spoke's audit log (unless Options.Spoke
// names another).
const UserAgent = "flotilla-agent"

// cacheStartTimeout bounds the start of the spoke cache.
const cacheStartTimeout = 2 * time.Minute

// Options configure an agent.
type Options struct {
	// Cluster is the cluster's name on the hub.
	Cluster string
	// WorkURL is the hub's work endpoint (flotilla hub --work-bind-address), e.g.
	// https://flotilla-work.flotilla-system.svc:9443.
	WorkURL string
	// TokenFile holds the agent's token for the work endpoint (audience flotilla.dev/work),
	// read again for every request.
	TokenFile string
	// HubKubeconfig, instead of TokenFile, is the agent's hub credential (`flotilla join
	// --mode pull` writes it): the agent requests its work tokens with it and renews it,
	// writing it back to the file (renew.go).
	HubKubeconfig string
	// HubKubeconfigSecret, instead, is NAMESPACE/NAME of a Secret on the spoke holding that
	// kubeconfig (membership.AgentCredentialSecret), read and renewed with the spoke
	// credentials.
	HubKubeconfigSecret string
	// CAFile, when set, is the CA bundle the hub's serving certificate is checked against
	// (else the system's roots).
	CAFile string
	// Spoke is the spoke the agent delivers to (the agent's in-cluster credentials).
	Spoke *rest.Config
	// PollInterval is how long the hub may hold a request for unchanged work (default 2s): an
	// idle agent asks once per interval, and a change is answered at once.
	PollInterval time.Duration
	// RemovalGrace is how long an owner must stay out of the hub's successful answers before
	// its objects are removed from the spoke (default 10m; failed requests never count).
	RemovalGrace time.Duration
	// DeliverOptions tune the delivery engine (tests shorten its periods).
	DeliverOptions deliver.Options

	// InProcess, instead of WorkURL and a hub credential, asks the work endpoint's handler in
	// this process (clusterwork.Local): a sharded hub replica's agent for a cluster it holds
	// (package shard). Spoke is then Engaged's credentials.
	InProcess http.RoundTripper
	Engaged   cluster.Cluster
}

// inProcessURL stands for the work endpoint's address in the requests of an agent InProcess.
const inProcessURL = "http://in-process"

// Agent keeps one spoke running its cluster's work.
type Agent struct {
	opts  Options
	hub   *hubClient
	d     *deliver.Deliverer
	book  *book
	log   logr.Logger
	wake  chan struct{} // a result changed
	mem   *memory       // what the agent delivered, kept on the spoke
	hubOK *contact      // the Events saying whether the hub answers
	etag  string
	// unresolved counts the answers in a row without an ETag (askSoon).
	unresolved int
	away       string                        // why the hub did not answer last; "" while it does
	sent       map[string]clusterwork.Result // the result last written per record
	skips      map[string]string             // invalid items last logged, by record
	apis       *fleetAPIs                    // the fleet APIs of the work (fleetapis.go)
}

// Run runs the agent until ctx ends. It fails only when it cannot start (options, the spoke's
// cache); once running, the hub going away is not an error.
func Run(ctx context.Context, opts Options) error {
	if opts.InProcess != nil {
		if opts.Engaged == nil {
			return errors.New("an agent in the hub's process needs the engaged cluster it delivers to")
		}
		opts.WorkURL, opts.Spoke = inProcessURL, opts.Engaged.GetConfig()
	}
	if opts.Cluster == "" || opts.WorkURL == "" || opts.Spoke == nil || (opts.InProcess == nil && credentialsGiven(opts) != 1) {
		return errors.New("the agent needs the cluster's name, the hub's work URL, one hub credential (a token file, a hub kubeconfig or its Secret) and the spoke's credentials")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.RemovalGrace <= 0 {
		opts.RemovalGrace = DefaultRemovalGrace
	}
	hub, err := newHubClient(opts.WorkURL, opts.Cluster, opts.TokenFile, opts.CAFile)
	if err != nil {
		return err
	}
	log := ctrllog.FromContext(ctx).WithName("agent").WithValues("cluster", opts.Cluster)
	if opts.InProcess != nil {
		// The engagement's credentials, flow control and user agent are the replica's.
		hub.http.Transport, hub.tokens = opts.InProcess, noToken{}
	} else {
		// The spoke sets the pace, as for the hub's engaged spokes: no client-side token
		// bucket (a kubeconfig's or in-cluster config's default is 5 requests a second), one
		// flow control that follows the spoke's answers.
		opts.Spoke = spokeclient.New(opts.Cluster).Configure(opts.Spoke)
		if opts.Spoke.UserAgent == "" {
			opts.Spoke.UserAgent = UserAgent
		}
		if hub.tokens, err = hubTokens(ctx, opts); err != nil {
			return err
		}
	}
	// A spoke cache of the agent's own: what it watches ends with the agent.
	cl, err := inventory.LocalCluster(opts.Spoke, opts.Cluster, install.Scheme(), log)
	if err != nil {
		return fmt.Errorf("the spoke: %w", err)
	}
	go func() {
		if err := cl.Start(ctx); err != nil {
			log.Error(err, "The spoke's cache stopped")
		}
	}()
	startCtx, cancel := context.WithTimeout(ctx, cacheStartTimeout)
	started := cl.GetCache().WaitForCacheSync(startCtx)
	cancel()
	if !started {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("the spoke's cache did not start within %s", cacheStartTimeout)
	}
	spoke, err := kubernetes.NewForConfig(opts.Spoke)
	if err != nil {
		return fmt.Errorf("the spoke: %w", err)
	}
	mem, recalled, err := openMemory(ctx, spoke, agentNamespace(), opts.Cluster)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	events := record.NewBroadcaster(record.WithContext(ctx))
	defer events.Shutdown()
	a := &Agent{opts: opts, hub: hub, book: newBook(opts.Cluster, opts.RemovalGrace), log: log, mem: mem,
		hubOK: newContact(ctx, spoke, events, mem.cm, opts.WorkURL),
		wake:  make(chan struct{}, 1), sent: map[string]clusterwork.Result{}, skips: map[string]string{}}
	a.book.recall(recalled)
	a.apis = newFleetAPIs(opts.Cluster, cl)
	a.book.apiJob = func(owner render.Owner, item clusterwork.Item) (deliver.Job, error) {
		return a.apis.job(ctx, owner, item)
	}
	a.d = deliver.New(ctx, func(owner render.Owner) {
		if !a.apis.notify(owner) { // an instance's result goes to the instances controller
			a.poke()
		}
	}, opts.DeliverOptions)
	// The one spoke, engaged as the hub's inventory engages each of its spokes.
	if err := a.d.Engage(ctx, multicluster.ClusterName(opts.Cluster), cl); err != nil {
		return err
	}
	if err := a.apis.start(ctx, a.d, cl); err != nil {
		return err
	}
	log.Info("Agent started", "hub", opts.WorkURL, "pollInterval", opts.PollInterval, "removalGrace", opts.RemovalGrace,
		"remembered", len(recalled), "memory", mem.namespace+"/"+MemoryName)
	tick := time.NewTicker(opts.PollInterval)
	defer tick.Stop()
	for {
		again := a.poll(ctx)
		a.serveAPIs()
		a.report(ctx)
		if err := a.mem.save(ctx, a.book.remember()); err != nil && ctx.Err() == nil {
			a.log.Info("What the agent delivered is not written on the spoke yet; trying again", "reason", err.Error())
		}
		var soon <-chan time.Time
		switch {
		case ctx.Err() != nil:
		case again == askNow:
			continue // new work with an ETag: the next request is held until the work changes again
		case again == askSoon:
			soon = time.After(unresolvedRetry)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-a.wake:
		case <-soon:
		}
	}
}

// poke asks the loop to report at once (a result changed); it never blocks.
func (a *Agent) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// fetched is the hub's answer to one request for the work.
type fetched struct {
	work    clusterwork.Work
	etag    string
	changed bool
	err     error
}

// nextAsk is when the loop asks for the work again.
type nextAsk int

const (
	askOnTick nextAsk = iota // at the next poll interval (or a result to report)
	askNow                   // at once: new work with an ETag, on which the hub holds the next request
	askSoon                  // after unresolvedRetry: new work without an ETag (some item not resolved yet)
)

// unresolvedRetry is how soon the work is asked for again when the hub could not resolve all of
// it (a revision its cache does not show yet): answered without an ETag, the request would not be
// held, and waiting a whole poll interval would delay a new owner's first delivery.
const unresolvedRetry = 250 * time.Millisecond

// maxUnresolvedRetries bounds the quick retries in a row.
const maxUnresolvedRetries = 8

// poll asks for the work and submits what it says, and says when to ask again. A failed request
// changes nothing on the spoke.
func (a *Agent) poll(ctx context.Context) (again nextAsk) {
	// The hub holds the request for up to a poll interval while nothing changes, so a change
	// arrives at once; results that change meanwhile are posted without waiting for it.
	out := make(chan fetched, 1)
	go func(etag string) {
		var f fetched
		f.work, f.etag, f.changed, f.err = a.hub.work(ctx, etag, a.opts.PollInterval)
		out <- f
	}(a.etag)
	var f fetched
	for answered := false; !answered; {
		select {
		case f = <-out:
			answered = true
		case <-a.wake:
			a.report(ctx)
		}
	}
	w, etag, changed, err := f.work, f.etag, f.changed, f.err
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		a.unreachable(err)
		return
	}
	now := time.Now()
	if a.hubOK.success(now) {
		a.log.Info("The hub answers again: delivering its current work", "owners", len(a.book.owners))
		a.book.resumed(now) // the time the hub did not answer does not count toward a removal
	}
	a.away = ""
	var removals []deliver.Job
	if changed {
		var submit []deliver.Job
		var invalid map[string]string
		submit, removals, invalid = a.book.answer(w, now)
		// Written ahead: a kind is on the spoke's record before anything of it is delivered,
		// so that an agent restarted at any moment knows what to remove.
		if err := a.mem.save(ctx, a.book.remember()); err != nil {
			if ctx.Err() == nil {
				a.log.Info("Work not delivered yet: what the agent delivers cannot be written on the spoke; asking again", "reason", err.Error())
			}
			submit = nil // the etag is kept: the next answer is whole again
		} else {
			a.etag, again = etag, askNow
			if etag == "" {
				// Soon a few times (a revision the hub's cache has not shown yet), then at the
				// poll interval (one it cannot resolve for longer).
				if a.unresolved++; a.unresolved <= maxUnresolvedRetries {
					again = askSoon
				} else {
					again = askOnTick
				}
			} else {
				a.unresolved = 0
			}
		}
		for _, job := range submit {
			a.d.Submit(job)
		}
		a.logInvalid(invalid)
		a.log.V(1).Info("Work received", "owners", len(w.Items), "submitted", len(submit))
	} else {
		removals = a.book.unchanged(now)
	}
	for _, job := range removals {
		a.log.Info("Removing an owner the hub has left out of the work for the removal grace", "owner", job.Owner.String(),
			"grace", a.opts.RemovalGrace)
		a.d.Submit(job)
	}
	return again
}

// unreachable says, once per outage (unreachableAfter failed polls in a row), in its log and
// with an Event on the spoke, that the hub is away and the spoke keeps its last work.
func (a *Agent) unreachable(err error) {
	why := err.Error()
	if a.hubOK.failure(why) {
		a.log.Info("The hub's work endpoint does not answer: keeping the last work applied and drift-corrected, deleting nothing",
			"reason", why, "owners", len(a.book.owners))
	} else if why != a.away {
		a.log.V(1).Info("The hub's work endpoint does not answer", "reason", why)
	}
	a.away = why
}

// logInvalid logs each item that cannot be delivered, once per reason.
func (a *Agent) logInvalid(invalid map[string]string) {
	for rec, why := range invalid {
		if a.skips[rec] != why {
			a.log.Info("Work not delivered", "record", rec, "reason", why)
		}
	}
	a.skips = invalid
}

// report posts the results that changed since last written, and finishes removals.
func (a *Agent) report(ctx context.Context) {
	var out clusterwork.Results
	refusals := a.apis.refusals()
	for owner, h := range a.book.owners {
		if h.removing {
			if res, ok := a.d.Result(owner, a.opts.Cluster); ok && res.Complete && res.Revision == removalRevision {
				a.log.Info("Owner removed from the spoke", "owner", owner.String())
				a.d.Forget(owner, a.opts.Cluster)
				a.book.removed(owner)
				a.apis.forget(owner)
				delete(a.sent, h.record)
			}
			continue
		}
		if _, refused := refusals[h.record]; h.job.Revision == "" || refused {
			continue
		}
		res, ok := a.d.Result(owner, a.opts.Cluster)
		if !ok || res.Revision != h.job.Revision || res.Disconnected {
			continue
		}
		r := resultOf(h.record, res)
		if prev, ok := a.sent[h.record]; ok && reflect.DeepEqual(prev, r) {
			continue
		}
		out.Items = append(out.Items, r)
	}
	out.Items = append(out.Items, a.unsentRefusals(refusals)...)
	if len(out.Items) == 0 || a.away != "" {
		return // nothing new; or the hub is away: posted when it answers again
	}
	written, err := a.hub.post(ctx, out)
	if err != nil {
		if ctx.Err() == nil {
			a.log.V(1).Info("Results not taken; posting them again", "results", len(out.Items), "reason", err.Error())
		}
		return
	}
	for _, r := range out.Items {
		// One the hub skipped (stale, or taken by a replica whose cache lags) is posted again
		// when it is current; one it wrote is not posted again until it changes.
		if _, skipped := written.Skipped[r.Record]; !skipped {
			a.sent[r.Record] = r
		}
	}
	a.log.V(1).Info("Results posted", "results", len(out.Items), "written", written.Written, "skipped", len(written.Skipped))
}

// resultOf is what the hub's record takes of a delivery result: counts and the message.
func resultOf(record string, res deliver.Result) clusterwork.Result {
	msg := res.Message
	if msg == "" {
		msg = res.PruneBlocked
	}
	return clusterwork.Result{Record: record, Revision: res.Revision, Complete: res.Complete, Applied: res.Applied,
		Ready: res.Ready, Failed: res.Failed, Drifted: res.Drifted, Fighting: res.Fighting, Message: msg}
}
