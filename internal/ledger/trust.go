package ledger

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A Delivery record lives in its owner's namespace, where people other than the controller may
// be able to write (a tenant with `edit` there, or anyone before the ValidatingAdmissionPolicy
// that keeps records to the controller was installed). So a record is believed only when it is
// what the ledger writes for an owner that exists: in the owner's namespace, with an owner
// reference to the owner's kind and name whose UID is the live owner's. And it says which
// Placement chose its cluster only when that live owner names the Placement now. Every reader
// that decides something from records (the scheduler's "chosen before", placement limits, a
// cluster's status.placed, an owner's own records) asks Trust; a record it refuses is ignored
// and counted (untrustedRecords).

// OwnerKind is one kind of hub object records may belong to.
type OwnerKind struct {
	// New returns an empty object of the kind, to read an owner into.
	New func() client.Object
	// Placement returns the Placement the owner names.
	Placement func(ctx context.Context, hub client.Reader, owner client.Object) (client.ObjectKey, error)
}

// Owners are the kinds records may belong to, by group and Kind. A record whose owner is of
// any other kind is not believed.
type Owners map[schema.GroupKind]OwnerKind

// Trust decides which records to believe.
type Trust struct {
	// Hub reads owners (the hub cache: every owner kind is watched).
	Hub    client.Reader
	Owners Owners
}

// untrustedRecords counts the records readers ignored, by what read them.
var untrustedRecords = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "flotilla_delivery_records_ignored_total",
	Help: "Delivery records ignored because the ledger did not write them for a live owner (or, for a Placement, one that names it; for an agent, because their changes make objects their revision lacks), by reader.",
}, []string{"reader"})

func init() {
	metrics.Registry.MustRegister(untrustedRecords)
	// Every reader starts at 0, so that rate() and alerts see its first ignored record.
	for _, reader := range []string{ReaderPlacement, ReaderAdmission, ReaderInventory, ReaderOwner, ReaderAgent} {
		untrustedRecords.WithLabelValues(reader)
	}
}

// Readers of records, as untrustedRecords labels them.
const (
	ReaderPlacement = "placement"
	ReaderAdmission = "admission"
	ReaderInventory = "inventory"
	ReaderOwner     = "owner"
	// ReaderAgent is the hub's work endpoint, serving a pull-mode agent its cluster's work.
	ReaderAgent = "agent"
)

// CountIgnored counts n records that reader ignored for reasons of its own, besides those
// Trust refused (the work endpoint refuses records whose changes make objects their revision
// lacks).
func CountIgnored(reader string, n int) {
	untrustedRecords.WithLabelValues(reader).Add(float64(n))
}

// Ignored is a record a reader did not believe, and why.
type Ignored struct {
	Record client.ObjectKey
	Reason string
}

func (i Ignored) String() string { return fmt.Sprintf("Delivery %s: %s", i.Record, i.Reason) }

// Check returns the Placement that rec's live owner names, or why rec is not to be believed
// ("" when it is). An error is a failed read, not a verdict.
func (t Trust) Check(ctx context.Context, rec *flotillav1.Delivery) (client.ObjectKey, string, error) {
	owner, kind, reason, err := t.owner(ctx, rec)
	if owner == nil {
		return client.ObjectKey{}, reason, err
	}
	placement, err := kind.Placement(ctx, t.Hub, owner)
	if err != nil {
		return client.ObjectKey{}, "", fmt.Errorf("read the Placement of %s %s: %w", rec.Spec.Owner.Kind, client.ObjectKeyFromObject(owner), err)
	}
	return placement, "", nil
}

// owner returns the live owner the ledger wrote rec for, and its kind; or, with no owner, why
// rec is not to be believed (or a failed read).
func (t Trust) owner(ctx context.Context, rec *flotillav1.Delivery) (client.Object, OwnerKind, string, error) {
	o := rec.Spec.Owner
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.Name}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return nil, OwnerKind{}, fmt.Sprintf("its owner's apiVersion %q is not valid", o.APIVersion), nil
	}
	kind, ok := t.Owners[gv.WithKind(o.Kind).GroupKind()]
	if !ok {
		return nil, OwnerKind{}, fmt.Sprintf("Flotilla delivers for no owner of kind %s", gv.WithKind(o.Kind).GroupKind()), nil
	}
	if want := NamespaceOf(render.Owner{Namespace: o.Namespace, Name: o.Name}); rec.Namespace != want {
		return nil, OwnerKind{}, fmt.Sprintf("it is not in its owner's namespace %s", want), nil
	}
	ref := ownerReference(rec)
	if ref == nil {
		return nil, OwnerKind{}, fmt.Sprintf("it has no owner reference to %s %s", o.Kind, o.Name), nil
	}
	owner := kind.New()
	if err := t.Hub.Get(ctx, key, owner); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, OwnerKind{}, fmt.Sprintf("its owner %s %s does not exist", o.Kind, key), nil
		}
		return nil, OwnerKind{}, "", fmt.Errorf("read the owner of Delivery %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	if owner.GetNamespace() != o.Namespace {
		// A cluster-scoped owner claimed in a namespace (a reader may ignore the namespace).
		return nil, OwnerKind{}, fmt.Sprintf("its owner %s %s is not in namespace %q", o.Kind, o.Name, o.Namespace), nil
	}
	if owner.GetUID() != ref.UID {
		return nil, OwnerKind{}, fmt.Sprintf("its owner reference names UID %s, not that of %s %s", ref.UID, o.Kind, key), nil
	}
	return owner, kind, "", nil
}

// Owned keeps the records the ledger wrote for a live owner (Check, without the Placement);
// what it ignores is counted for reader.
func (t Trust) Owned(ctx context.Context, reader string, records []flotillav1.Delivery) ([]flotillav1.Delivery, []Ignored, error) {
	out := make([]flotillav1.Delivery, 0, len(records))
	var ignored []Ignored
	for i := range records {
		_, _, reason, err := t.owner(ctx, &records[i])
		if err != nil {
			return nil, nil, err
		}
		if reason != "" {
			ignored = append(ignored, Ignored{Record: client.ObjectKeyFromObject(&records[i]), Reason: reason})
			continue
		}
		out = append(out, records[i])
	}
	untrustedRecords.WithLabelValues(reader).Add(float64(len(ignored)))
	return out, ignored, nil
}

// ownerReference returns rec's owner reference to the owner its spec names, if any.
func ownerReference(rec *flotillav1.Delivery) *metav1.OwnerReference {
	o := rec.Spec.Owner
	for i, r := range rec.OwnerReferences {
		if r.APIVersion == o.APIVersion && r.Kind == o.Kind && r.Name == o.Name {
			return &rec.OwnerReferences[i]
		}
	}
	return nil
}
