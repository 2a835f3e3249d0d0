package shard

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A replica whose Lease was not renewed within its duration is gone; other Leases of the
// namespace are not replicas; a replica that stops deletes its own Lease.
func TestPeersAliveAndLeaving(t *testing.T) {
	ctx := context.Background()
	lease := func(name, holder string, renewed time.Duration) *coordinationv1.Lease {
		at := metav1.NewMicroTime(time.Now().Add(-renewed))
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(15)), RenewTime: &at}}
	}
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		lease("flotilla-replica-hub-1", "hub-1", 5*time.Second),
		lease("flotilla-replica-hub-2", "hub-2", 20*time.Second), // dead
		lease("flotilla-hub", "hub-1", time.Second),              // the election's, not a replica
	).Build()
	p := newPeers(kube, "flotilla-system", "hub-0", 15*time.Second, logr.Discard())
	if err := p.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.look(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, peer := range p.Snapshot() {
		ids = append(ids, peer.ID)
	}
	if got, want := ids, []string{"hub-0", "hub-1"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("alive replicas %v, want %v", got, want)
	}
	p.leave()
	var left coordinationv1.Lease
	if err := kube.Get(ctx, leaseKey(p), &left); err == nil {
		t.Fatalf("the Lease of a replica that stopped is still there: %+v", left.Spec)
	}
}

func leaseKey(p *peers) client.ObjectKey {
	return client.ObjectKey{Namespace: p.namespace, Name: p.leaseName()}
}
