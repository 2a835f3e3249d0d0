package shard

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fence is a cluster's fence Lease (fencePrefix-<cluster>): the replica it names may deliver to
// the cluster, and no other. A holder that cannot renew it stops delivering before it could
// expire for the others (held): it expires for them LeaseDuration after the last renewal, and
// the holder stops believing it two thirds of the way there.
type fence struct {
	kube     client.Client
	key      client.ObjectKey
	self     string
	duration time.Duration

	// mu guards renewedAt: the coordinator's loop renews, and every write of the cluster's
	// delivery asks whether the fence still holds (fencedCluster).
	mu        sync.Mutex
	renewedAt time.Time // the last renewal the API server took; zero when not held
}

// renewed is when the API server last took this replica's renewal; zero when not held.
func (f *fence) renewed() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renewedAt
}

func (f *fence) setRenewed(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewedAt = at
}

// acquire takes the Lease when it is free, expired or already this replica's, and reports
// whether this replica holds it now.
func (f *fence) acquire(ctx context.Context, now time.Time) bool {
	l := &coordinationv1.Lease{}
	err := f.kube.Get(ctx, f.key, l)
	stamp := metav1.NewMicroTime(now)
	switch {
	case apierrors.IsNotFound(err):
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(f.self), LeaseDurationSeconds: ptr.To(int32(f.duration / time.Second)),
				AcquireTime: &stamp, RenewTime: &stamp}}
		err = f.kube.Create(ctx, l)
	case err != nil:
	case heldByOther(l, f.self, now):
		f.setRenewed(time.Time{})
		return false
	default:
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != f.self {
			l.Spec.AcquireTime = &stamp
		}
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = ptr.To(f.self), ptr.To(int32(f.duration/time.Second)), &stamp
		err = f.kube.Update(ctx, l) // over the version read: a racing replica's write makes it fail
	}
	if err != nil {
		return false // a renewal that failed: held says how long the last one still counts
	}
	f.setRenewed(now)
	return true
}

// held reports whether this replica may still count on the Lease at now.
func (f *fence) held(now time.Time) bool {
	at := f.renewed()
	return !at.IsZero() && now.Sub(at) < f.duration*2/3
}

// release gives the Lease up at once, so that the next holder need not wait for it to expire.
func (f *fence) release(ctx context.Context) {
	f.setRenewed(time.Time{})
	l := &coordinationv1.Lease{}
	if err := f.kube.Get(ctx, f.key, l); err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != f.self {
		return
	}
	l.Spec.HolderIdentity = ptr.To("")
	_ = f.kube.Update(ctx, l)
}

// heldByOther reports whether a replica other than self holds l, unexpired, at now.
func heldByOther(l *coordinationv1.Lease, self string, now time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || *l.Spec.HolderIdentity == self {
		return false
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}
