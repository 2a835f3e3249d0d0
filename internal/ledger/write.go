package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Prepare makes sure owner's record on cluster exists, lists kinds, has the divided workloads'
// shares in replicas (sorted by object) and what the workloads request in placed, before
// objects of those kinds or at those shares are delivered there, and returns every kind the record lists: where the owner's
// objects on the cluster may be. A failure means nothing new may be delivered yet.
func (l *Ledger) Prepare(ctx context.Context, owner Owner, cluster string, kinds []string, replicas []flotillav1.WorkloadReplicas, placed corev1.ResourceList) ([]string, error) {
	have, exists, err := l.known(ctx, owner.Owner, cluster)
	if err != nil {
		return nil, err
	}
	if !exists {
		// A record made anew (its owner deleted and created again, say) starts from nothing.
		l.mu.Lock()
		delete(l.completed, pair{owner.Owner, cluster})
		l.mu.Unlock()
	}
	want := union(have.kinds, kinds)
	placement := placementValue(owner.Placement)
	if exists && len(want) == len(have.kinds) && have.placement == placement && equality.Semantic.DeepEqual(have.replicas, replicas) &&
		equality.Semantic.DeepEqual(have.placed, placed) {
		return want, nil
	}
	key := l.Key(owner.Owner, cluster)
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&flotillav1.DeliverySpec{
		Owner:   flotillav1.DeliveryOwner{APIVersion: owner.APIVersion, Kind: owner.ObjectKind, Namespace: owner.Namespace, Name: owner.Name},
		Cluster: cluster, Kinds: want, Replicas: replicas, Placed: placed,
	})
	if err != nil {
		return nil, err
	}
	u := newRecord(key)
	u.SetLabels(map[string]string{flotillav1.LabelOwner: owner.LabelValue(), flotillav1.LabelCluster: labelSafe(cluster), labelPlacement: placement})
	if owner.UID != "" {
		u.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
			"apiVersion": owner.APIVersion, "kind": owner.ObjectKind, "name": owner.Name, "uid": string(owner.UID), "controller": true,
		}}
	}
	u.Object["spec"] = spec
	if err := l.writer(true).Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("record the delivery of %s to cluster %s (Delivery %s): %w", owner, cluster, key, err)
	}
	l.remember(pair{owner.Owner, cluster}, func(w *ownWrite) {
		w.kinds, w.placement, w.replicas, w.placed, w.removed = want, placement, slices.Clone(replicas), placed.DeepCopy(), false
	})
	return want, nil
}

// writeStatus writes status into owner's record on cluster, if it changed. A record that does
// not exist (nothing was prepared) is left alone.
func (l *Ledger) writeStatus(ctx context.Context, owner render.Owner, cluster string, status flotillav1.DeliveryStatus) error {
	digest, err := digestOf(status)
	if err != nil {
		return err
	}
	p := pair{owner, cluster}
	l.mu.Lock()
	w, recent := l.written[p]
	recent = recent && time.Since(w.at) < cacheLag
	l.mu.Unlock()
	// The ledger's own status write, when recent, is what the API server holds; otherwise
	// the cache is.
	wroteStatus := recent && w.status != ""
	if recent && (w.removed || w.status == digest) {
		return nil
	}
	key := l.Key(owner, cluster)
	var cached flotillav1.Delivery
	switch err := l.Hub.Get(ctx, key, &cached); {
	case apierrors.IsNotFound(err) && !recent:
		return nil
	case err == nil:
		if have, err := digestOf(cached.Status); err == nil && have == digest && !wroteStatus {
			return nil
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read Delivery %s: %w", key, err)
	}
	u := newRecord(key)
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
	if err != nil {
		return err
	}
	u.Object["status"] = st
	if err := l.Hub.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("write the result of %s on cluster %s (Delivery %s): %w", owner, cluster, key, err)
	}
	l.remember(p, func(w *ownWrite) { w.status = digest })
	return nil
}

// Remove deletes owner's record on cluster, once its objects are gone from there (or the
// cluster is).
func (l *Ledger) Remove(ctx context.Context, owner render.Owner, cluster string) error {
	key := l.Key(owner, cluster)
	rec := &flotillav1.Delivery{}
	rec.Namespace, rec.Name = key.Namespace, key.Name
	if err := client.IgnoreNotFound(l.Hub.Delete(ctx, rec)); err != nil {
		return fmt.Errorf("delete Delivery %s: %w", key, err)
	}
	l.remember(pair{owner, cluster}, func(w *ownWrite) { *w = ownWrite{removed: true} })
	l.release(owner, cluster)
	l.mu.Lock()
	delete(l.completed, pair{owner, cluster})
	l.mu.Unlock()
	l.reportQueue().Drop(pair{owner, cluster})
	l.workQueue().Drop(pair{owner, cluster})
	return nil
}

// recorded is what a record says that Prepare maintains.
type recorded struct {
	kinds     []string
	placement string
	replicas  []flotillav1.WorkloadReplicas
	placed    corev1.ResourceList
}

// known returns what owner's record on cluster says, and whether it exists, from the cache and
// the ledger's own recent writes.
func (l *Ledger) known(ctx context.Context, owner render.Owner, cluster string) (recorded, bool, error) {
	key := l.Key(owner, cluster)
	var cached flotillav1.Delivery
	err := l.Hub.Get(ctx, key, &cached)
	if err != nil && !apierrors.IsNotFound(err) {
		return recorded{}, false, fmt.Errorf("read Delivery %s: %w", key, err)
	}
	have, exists := recorded{kinds: cached.Spec.Kinds, placement: cached.Labels[labelPlacement], replicas: cached.Spec.Replicas, placed: cached.Spec.Placed}, err == nil
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.written[pair{owner, cluster}]; ok && time.Since(w.at) < cacheLag {
		if w.removed {
			return recorded{}, false, nil
		}
		if w.kinds != nil {
			have, exists = recorded{kinds: union(have.kinds, w.kinds), placement: w.placement, replicas: w.replicas, placed: w.placed}, true
		}
	}
	return have, exists, nil
}

// remember records a write made now, and forgets writes older than cacheLag.
func (l *Ledger) remember(p pair, change func(*ownWrite)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.written == nil {
		l.written = map[pair]ownWrite{}
	}
	now := time.Now()
	for k, w := range l.written {
		if now.Sub(w.at) >= cacheLag {
			delete(l.written, k)
		}
	}
	w := l.written[p]
	change(&w)
	w.at = now
	l.written[p] = w
}

// newRecord returns the identity of a record, to apply fields to.
func newRecord(key client.ObjectKey) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{}}}
	u.SetGroupVersionKind(flotillav1.GroupVersion.WithKind("Delivery"))
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return u
}

// labelSafe returns a label value naming a cluster: the name when it fits, a hash otherwise.
func labelSafe(cluster string) string {
	if len(cluster) <= 63 {
		return cluster
	}
	sum := sha256.Sum256([]byte(cluster))
	return "c-" + hex.EncodeToString(sum[:])[:20]
}

func digestOf(status flotillav1.DeliveryStatus) (string, error) {
	data, err := json.Marshal(status)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// union returns the sorted set of a and b.
func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	sort.Strings(out)
	return slices.Compact(out)
}
