package inventory

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/logkeys"
)

// credentialsIndex indexes Clusters by the namespace/name of their credentials Secret.
const credentialsIndex = "spec.credentials.secret"

// reconciler turns Cluster objects into members of the provider and is the only writer of
// Cluster status.
type reconciler struct {
	provider *Provider
	hub      client.Client
	reader   client.Reader // uncached: credentials are never cached on the hub
	events   record.EventRecorder
	ctx      context.Context

	// written is each Cluster's status as last written, with when: a pass that follows at
	// once may read a cache that does not show it yet, and must not write it again.
	mu      sync.Mutex
	written map[string]statusWrite
}

type statusWrite struct {
	at     time.Time
	status flotillav1.ClusterStatus
}

// ownWriteLag is how long a status write is trusted over a hub cache that does not show it.
const ownWriteLag = 10 * time.Second

// wroteAlready reports whether want is what the reconciler wrote for cluster moments ago.
func (r *reconciler) wroteAlready(cluster string, want flotillav1.ClusterStatus) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[cluster]
	return ok && time.Since(w.at) < ownWriteLag && equality.Semantic.DeepEqual(w.status, want)
}

func (r *reconciler) wrote(cluster string, status flotillav1.ClusterStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[string]statusWrite{}
	}
	r.written[cluster] = statusWrite{at: time.Now(), status: *status.DeepCopy()}
}

// +kubebuilder:rbac:groups=flotilla.dev,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=flotilla.dev,resources=clusters/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=flotilla-system,resources=secrets,verbs=patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the Cluster controller on the hub and makes the provider engage
// spokes through mgr. ctx bounds the provider's probers.
func (p *Provider) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	p.mgr = mgr
	local := mgr.GetLocalManager()
	p.hub, p.reader = local.GetClient(), local.GetAPIReader()
	if err := local.GetFieldIndexer().IndexField(ctx, &flotillav1.Cluster{}, credentialsIndex, func(obj client.Object) []string {
		ref := obj.(*flotillav1.Cluster).Spec.Credentials
		return []string{ref.Namespace + "/" + ref.Name}
	}); err != nil {
		return err
	}
	if err := ledger.IndexByCluster(ctx, local.GetFieldIndexer()); err != nil {
		return err
	}
	// core/v1 Events, as every Flotilla controller records them (see internal/propagation).
	//lint:ignore SA1019 events.k8s.io folds Events that differ only in their message.
	events := local.GetEventRecorderFor("flotilla-inventory")
	r := &reconciler{
		provider: p,
		hub:      local.GetClient(),
		reader:   local.GetAPIReader(),
		events:   events,
		ctx:      ctx,
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	p.elected = func() bool {
		select {
		case <-local.Elected():
			return true
		default:
			return false
		}
	}
	if p.opts.EveryReplica {
		// A replica that was not elected wrote no status; once elected, it writes what it sees
		// of every Cluster now, not only of those whose probes change from here on.
		go func() {
			select {
			case <-local.Elected():
			case <-ctx.Done():
				return
			}
			var clusters flotillav1.ClusterList
			if err := p.hub.List(ctx, &clusters); err != nil {
				p.log.Error(err, "Cannot list the Clusters to write their status as the elected replica")
				return
			}
			for _, c := range clusters.Items {
				p.notify(ctx, c.Name)
			}
		}()
	}
	return ctrl.NewControllerManagedBy(local).
		Named("cluster-inventory").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(!p.opts.EveryReplica)}).
		For(&flotillav1.Cluster{}).
		Watches(secret, handler.EnqueueRequestsFromMapFunc(r.clustersUsingSecret), builder.OnlyMetadata).
		WatchesRawSource(source.Channel(p.events, &handler.EnqueueRequestForObject{})).
		// A record made or removed changes what is placed on its cluster, and so does a
		// change of its spec.placed; its status changes do not.
		Watches(&flotillav1.Delivery{}, handler.EnqueueRequestsFromMapFunc(clusterOfRecord),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: placedChanged})).
		Complete(r)
}

func (r *reconciler) clustersUsingSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	var clusters flotillav1.ClusterList
	if err := r.hub.List(ctx, &clusters, client.MatchingFields{credentialsIndex: obj.GetNamespace() + "/" + obj.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(clusters.Items))
	for _, c := range clusters.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
	}
	return reqs
}

// clusterOfRecord maps a Delivery record to its Cluster.
func clusterOfRecord(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.(*flotillav1.Delivery).Spec.Cluster}}}
}

// placed reads what Flotilla placed on a cluster from its Delivery records, those it wrote
// for a live owner (ledger.Trust).
func (r *reconciler) placed(ctx context.Context, cluster string) (placed, error) {
	var records flotillav1.DeliveryList
	if err := r.hub.List(ctx, &records, client.MatchingFields{ledger.ClusterIndex: cluster}, client.UnsafeDisableDeepCopy); err != nil {
		return placed{}, fmt.Errorf("read the Delivery records of cluster %s: %w", cluster, err)
	}
	trusted, _, err := ledger.Trust{Hub: r.hub, Owners: r.provider.opts.RecordOwners}.Owned(ctx, ledger.ReaderInventory, records.Items)
	if err != nil {
		return placed{}, err
	}
	var sum division.Usage
	for i := range trusted {
		sum = sum.Add(division.UsageFrom(trusted[i].Spec.Placed))
	}
	return placed{owners: int32(len(trusted)), requests: sum.ResourceList()}, nil
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues(logkeys.Cluster, req.Name)
	c := &flotillav1.Cluster{}
	if err := r.hub.Get(ctx, req.NamespacedName, c); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleting a Cluster only disconnects: the spoke keeps everything it runs.
			r.provider.removeMember(req.Name)
			r.provider.setGrant(req.Name, "")
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !c.DeletionTimestamp.IsZero() {
		r.provider.removeMember(req.Name)
		r.provider.setGrant(req.Name, "")
		return reconcile.Result{}, nil
	}
	r.provider.setGrant(c.Name, c.Annotations[flotillav1.AnnotationSpokeGrant])
	var snap snapshot
	creds, bad, err := (*credentials)(nil), (*observation)(nil), error(nil)
	if c.Pulls() {
		// The hub never connects to a pull cluster: its agent fetches the work (pull.go).
		r.provider.removeMember(c.Name)
		snap = pullSnapshot
	} else if creds, bad, err = loadCredentials(ctx, r.reader, c); err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case c.Pulls():
	case bad != nil:
		r.provider.removeMember(c.Name)
		snap = snapshot{obs: *bad}
	default:
		// The prober outlives this reconcile: it runs under the provider's context.
		snap = r.provider.ensureMember(r.ctx, c.Name, creds).snapshot()
		if snap.obs == (observation{}) {
			return reconcile.Result{}, nil // the first probe's result will bring us back
		}
	}
	on, err := r.placed(ctx, c.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.writeStatus(ctx, c, snap, on, log)
}

// writeStatus patches the Cluster's status if, and only if, it changed, and records an Event
// when readiness changes.
func (r *reconciler) writeStatus(ctx context.Context, c *flotillav1.Cluster, snap snapshot, on placed, log interface{ Info(string, ...any) }) error {
	want, changed := desiredStatus(c, snap, on, metav1.Now())
	if !changed || r.wroteAlready(c.Name, want) || !r.provider.isElected() {
		return nil
	}
	before := c.DeepCopy()
	prev := readyCondition(before)
	prevCreds := meta.FindStatusCondition(before.Status.Conditions, flotillav1.ClusterCredentialsValid)
	c.Status = want
	// The patch always carries placements, so that a Cluster nothing was ever placed on shows
	// PLACEMENTS 0 rather than blank (a merge patch leaves out what equals its base).
	base := before.DeepCopy()
	base.Status.Placements = -1
	if err := r.hub.Status().Patch(ctx, c, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("update status of cluster %s: %w", c.Name, err)
	}
	r.wrote(c.Name, want)
	if cred := snap.credObs; cred.reason != "" && (prevCreds == nil || prevCreds.Reason != cred.reason) && credentialsNews(cred.reason) {
		eventType := corev1.EventTypeNormal
		if cred.reason != flotillav1.ReasonRenewed {
			eventType = corev1.EventTypeWarning
		}
		r.events.Event(c, eventType, cred.reason, cred.message)
	}
	if prev == nil || prev.Status != snap.obs.status || prev.Reason != snap.obs.reason {
		eventType := corev1.EventTypeNormal
		if snap.obs.status != metav1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
		r.events.Event(c, eventType, snap.obs.reason, snap.obs.message)
		log.Info("Cluster readiness changed", "ready", snap.obs.status, "reason", snap.obs.reason)
	}
	return nil
}

// credentialsNews tells the CredentialsValid reasons worth an Event: a renewal, and what needs
// someone to act.
func credentialsNews(reason string) bool {
	switch reason {
	case flotillav1.ReasonRenewed, flotillav1.ReasonRenewFailed, flotillav1.ReasonExpiringSoon, flotillav1.ReasonExpired:
		return true
	}
	return false
}

func readyCondition(c *flotillav1.Cluster) *metav1.Condition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == flotillav1.ClusterReady {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// placedChanged reports whether an update of a record changed what it says is placed.
func placedChanged(e event.UpdateEvent) bool {
	o, okO := e.ObjectOld.(*flotillav1.Delivery)
	n, okN := e.ObjectNew.(*flotillav1.Delivery)
	return okO && okN && !equality.Semantic.DeepEqual(o.Spec.Placed, n.Spec.Placed)
}
