package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/coalesce"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// fieldManager owns what the ledger applies to records.
const fieldManager = "flotilla"

// cacheLag is how long the ledger trusts its own writes over a hub cache that does not show
// them yet. Watch events arrive within milliseconds; the margin covers a busy machine.
const cacheLag = 10 * time.Second

// Owner is the hub object records belong to: render.Owner plus what an owner reference needs.
type Owner struct {
	render.Owner
	APIVersion string
	// ObjectKind is the owner's Kind as the API knows it (Deployment), where render.Owner's
	// Kind may carry the group (Deployment.apps).
	ObjectKind string
	UID        types.UID
	// Placement is the Placement that chooses the owner's clusters. Its scheduler counts the
	// clusters of its owners' records as chosen before, so a wiped Placement status does not
	// un-stick a cordoned cluster that still holds their objects.
	Placement client.ObjectKey
}

// Records are applied (server-side) and deleted by the ledger alone.
// +kubebuilder:rbac:groups=flotilla.dev,resources=deliveries,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=flotilla.dev,resources=deliveries/status,verbs=patch

// Ledger reads and writes Delivery records.
type Ledger struct {
	// Hub reads records through the hub cache and writes them.
	Hub client.Client
	// Owners are the kinds records may belong to, to decide which records to believe (Trust):
	// without them no other owner's record is, and an owner's own are when they reference an
	// owner of its kind and name, whatever its UID.
	Owners Owners
	// Ahead, when set, makes the writes a delivery waits for: a record prepared (Prepare) and
	// spec.work written ahead of a rollout's delivery (WriteWork). The hub controller gives it
	// a client of its own with no client-side rate limit, so that they never wait in line
	// behind the writes aside (the records' status, spec.work aside), which Hub's rate limit
	// paces. Nil: Hub makes them.
	Ahead client.Writer

	mu      sync.Mutex
	written map[pair]ownWrite
	// completed is the revision each record's latest complete result reported (report.go).
	completed map[pair]string
	reports   *coalesce.Queue[pair, report] // results to write into records (report.go)
	once      sync.Once
	works     *coalesce.Queue[pair, flotillav1.DeliveryWork] // spec.work to write (work.go)
	workOnce  sync.Once

	// admitting serializes divisions over clusters with placement limits (admission.go).
	admitting sync.Mutex
	// reserved is what each record's owner placed on each cluster since the controller
	// started, by cluster and record (admission.go); guarded by mu.
	reserved map[string]map[client.ObjectKey]division.Usage
}

// pair is one owner on one cluster: one record.
type pair struct {
	owner   render.Owner
	cluster string
}

// ownWrite is what the ledger last wrote to a record, and when.
type ownWrite struct {
	at        time.Time
	kinds     []string                      // spec.kinds written
	placement string                        // the placement label written
	replicas  []flotillav1.WorkloadReplicas // spec.replicas written
	placed    corev1.ResourceList           // spec.placed written
	status    string                        // digest of the status written; "" if none
	work      *flotillav1.DeliveryWork      // spec.work written (work.go); nil if none
	removed   bool
}

func (l *Ledger) trust() Trust { return Trust{Hub: l.Hub, Owners: l.Owners} }

// writer is the client of a write: ahead says a delivery waits for it.
func (l *Ledger) writer(ahead bool) client.Writer {
	if ahead && l.Ahead != nil {
		return l.Ahead
	}
	return l.Hub
}

// NamespaceOf returns where owner's records live: its own namespace, or Flotilla's for a
// cluster-scoped owner.
func NamespaceOf(owner render.Owner) string {
	if owner.Namespace != "" {
		return owner.Namespace
	}
	return membership.Namespace
}

// Key names the record of owner on cluster: readable when it fits, a hash otherwise.
func (l *Ledger) Key(owner render.Owner, cluster string) client.ObjectKey {
	kind := strings.ToLower(owner.Kind)
	name := kind + "." + owner.Name + "." + cluster
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		sum := sha256.Sum256([]byte(owner.String() + "\x00" + cluster))
		name = "d-" + hex.EncodeToString(sum[:])[:32]
	}
	return client.ObjectKey{Namespace: NamespaceOf(owner), Name: name}
}

// Records returns owner's records by cluster, as far as the cache and the ledger's own recent
// writes know. Records the ledger did not write for the live owner (Trust) are left out.
func (l *Ledger) Records(ctx context.Context, owner render.Owner) (map[string]*flotillav1.Delivery, error) {
	var list flotillav1.DeliveryList
	if err := l.Hub.List(ctx, &list, client.InNamespace(NamespaceOf(owner)), client.MatchingLabels{flotillav1.LabelOwner: owner.LabelValue()}); err != nil {
		return nil, fmt.Errorf("list the Delivery records of %s: %w", owner, err)
	}
	out := map[string]*flotillav1.Delivery{}
	var live types.UID // the owner's UID, once one record is found to reference it
	ignored := 0
	for i := range list.Items {
		d := &list.Items[i]
		if d.Spec.Owner.Name != owner.Name || d.Spec.Owner.Namespace != owner.Namespace {
			continue // a label-hash collision, however unlikely
		}
		ref := ownerReference(d)
		switch {
		case ref == nil:
			ignored++
			continue
		case l.Owners == nil || (live != "" && ref.UID == live):
		case live != "":
			ignored++
			continue
		default:
			_, _, reason, err := l.trust().owner(ctx, d)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				ignored++
				continue
			}
			live = ref.UID
		}
		out[d.Spec.Cluster] = d
	}
	untrustedRecords.WithLabelValues(ReaderOwner).Add(float64(ignored))
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, w := range l.written {
		if p.owner != owner || time.Since(w.at) >= cacheLag {
			continue
		}
		switch d, seen := out[p.cluster]; {
		case w.removed:
			delete(out, p.cluster)
		case !seen:
			out[p.cluster] = &flotillav1.Delivery{Spec: flotillav1.DeliverySpec{Cluster: p.cluster, Kinds: slices.Clone(w.kinds)}}
		default:
			d.Spec.Kinds = union(d.Spec.Kinds, w.kinds)
		}
	}
	return out, nil
}
