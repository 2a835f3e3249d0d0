package ledger

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ClusterIndex indexes Delivery records by their cluster (IndexByCluster), so that what is
// placed on a cluster is found without a scan of every record.
const ClusterIndex = "spec.cluster"

// IndexByCluster registers ClusterIndex with the hub cache.
func IndexByCluster(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &flotillav1.Delivery{}, ClusterIndex, func(obj client.Object) []string {
		return []string{obj.(*flotillav1.Delivery).Spec.Cluster}
	})
}

// Admit runs divide while no other owner's division runs, so that two owners never both take
// the last room a cluster's placement limits admit. divide gets what each limited cluster
// still admits of owner's workloads (division.Free: its limits minus what the other owners
// placed there) and returns what owner is to place on each cluster; that is reserved at once,
// before its records say so. What another owner placed is what it reserved here since the
// controller started, else what its record's spec.placed says. Clusters without limits are
// not looked up.
func (l *Ledger) Admit(ctx context.Context, owner render.Owner, limits map[string]division.Usage,
	divide func(free map[string]division.Usage) map[string]division.Usage) error {
	l.admitting.Lock()
	defer l.admitting.Unlock()
	free, err := l.Free(ctx, owner, limits)
	if err != nil {
		return err
	}
	placed := divide(free)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reserved == nil {
		l.reserved = map[string]map[client.ObjectKey]division.Usage{}
	}
	for cluster, u := range placed {
		if l.reserved[cluster] == nil {
			l.reserved[cluster] = map[client.ObjectKey]division.Usage{}
		}
		l.reserved[cluster][l.Key(owner, cluster)] = u
	}
	return nil
}

// Free returns what each limited cluster still admits of owner's workloads: its limits minus
// what the other owners placed there. It reserves nothing (Admit does).
func (l *Ledger) Free(ctx context.Context, owner render.Owner, limits map[string]division.Usage) (map[string]division.Usage, error) {
	free := make(map[string]division.Usage, len(limits))
	for cluster, lim := range limits {
		if len(lim) == 0 {
			continue
		}
		others, err := l.placedByOthers(ctx, owner, cluster)
		if err != nil {
			return nil, err
		}
		free[cluster] = division.Free(lim, others)
	}
	return free, nil
}

// placedByOthers sums what owners other than owner placed on cluster, as their records say
// where Trust believes them.
func (l *Ledger) placedByOthers(ctx context.Context, owner render.Owner, cluster string) (division.Usage, error) {
	var records flotillav1.DeliveryList
	if err := l.Hub.List(ctx, &records, client.MatchingFields{ClusterIndex: cluster}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("read what is placed on cluster %s: %w", cluster, err)
	}
	trusted, _, err := l.trust().Owned(ctx, ReaderAdmission, records.Items)
	if err != nil {
		return nil, err
	}
	own := l.Key(owner, cluster)
	l.mu.Lock()
	defer l.mu.Unlock()
	reserved := l.reserved[cluster]
	out := division.Usage{}
	for i := range trusted {
		key := client.ObjectKeyFromObject(&trusted[i])
		if _, ok := reserved[key]; ok || key == own {
			continue // counted below from the fresher reservation, or owner's own
		}
		out.Add(division.UsageFrom(trusted[i].Spec.Placed))
	}
	for key, u := range reserved {
		if key != own {
			out.Add(u)
		}
	}
	return out, nil
}

// release forgets what owner reserved on cluster: its record is gone.
func (l *Ledger) release(owner render.Owner, cluster string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.reserved[cluster], l.Key(owner, cluster))
}
