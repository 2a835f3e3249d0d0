package shard

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded/sharder"
)

// peers is the replicas alive now, each known by a Lease it renews (peerPrefix-ID in the
// namespace): a replica whose Lease was not renewed for its duration is gone. It implements
// multicluster-runtime's peer registry with the timing of Options (the library's own waits 30s
// before it lets a dead replica go), and a replica that stops deletes its Lease, so that the
// others take its clusters at once rather than when the Lease expires.
type peers struct {
	kube      client.Client
	namespace string
	self      sharder.PeerInfo
	ttl       time.Duration
	log       logr.Logger

	mu    sync.RWMutex
	alive []sharder.PeerInfo
	// since is when this replica's Lease was first written, looked is whether a look at the
	// Leases has succeeded since (ready).
	since  time.Time
	looked bool
}

// ready reports whether this replica has seen its peers long enough to decide anything: a look
// at the Leases succeeded a renewal period after its own was first written, so replicas started
// together see each other before any takes a cluster.
func (p *peers) ready(now time.Time) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.looked && !p.since.IsZero() && now.Sub(p.since) >= p.ttl/3
}

func newPeers(kube client.Client, namespace, id string, ttl time.Duration, log logr.Logger) *peers {
	return &peers{kube: kube, namespace: namespace, self: sharder.PeerInfo{ID: id, Weight: 1}, ttl: ttl, log: log}
}

func (p *peers) Self() sharder.PeerInfo { return p.self }

func (p *peers) Snapshot() []sharder.PeerInfo {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]sharder.PeerInfo(nil), p.alive...)
}

// Run renews this replica's Lease and looks at the others' every third of the Lease's duration
// until ctx ends, and then deletes its Lease.
func (p *peers) Run(ctx context.Context) error {
	tick := time.NewTicker(p.ttl / 3)
	defer tick.Stop()
	for {
		call, cancel := context.WithTimeout(ctx, p.ttl/3)
		err := p.renew(call)
		if err != nil && ctx.Err() == nil {
			p.log.Info("Cannot renew this replica's Lease; trying again", "reason", err.Error())
		} else if err == nil {
			p.mu.Lock()
			if p.since.IsZero() {
				p.since = time.Now()
			}
			p.mu.Unlock()
		}
		if err := p.look(call); err != nil && ctx.Err() == nil {
			p.log.Info("Cannot list the replicas' Leases; trying again", "reason", err.Error())
		}
		cancel()
		select {
		case <-ctx.Done():
			p.leave()
			return nil
		case <-tick.C:
		}
	}
}

func (p *peers) leaseName() string { return peerPrefix + "-" + p.self.ID }

func (p *peers) renew(ctx context.Context) error {
	now := metav1.NowMicro()
	l := &coordinationv1.Lease{}
	err := p.kube.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: p.leaseName()}, l)
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: p.namespace, Name: p.leaseName()},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(p.self.ID), LeaseDurationSeconds: ptr.To(int32(p.ttl / time.Second)),
				AcquireTime: &now, RenewTime: &now}}
		return p.kube.Create(ctx, l)
	}
	if err != nil {
		return err
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = ptr.To(p.self.ID), ptr.To(int32(p.ttl/time.Second)), &now
	return p.kube.Update(ctx, l)
}

func (p *peers) look(ctx context.Context) error {
	var leases coordinationv1.LeaseList
	if err := p.kube.List(ctx, &leases, client.InNamespace(p.namespace)); err != nil {
		return err
	}
	now := time.Now()
	var alive []sharder.PeerInfo
	for _, l := range leases.Items {
		if !strings.HasPrefix(l.Name, peerPrefix+"-") || l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
			continue
		}
		if now.After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)) {
			continue // not renewed in time: gone
		}
		alive = append(alive, sharder.PeerInfo{ID: *l.Spec.HolderIdentity, Weight: 1})
	}
	p.mu.Lock()
	p.alive = alive
	p.looked = p.looked || (!p.since.IsZero() && time.Since(p.since) >= p.ttl/3)
	p.mu.Unlock()
	return nil
}

// leave deletes this replica's Lease, within a few seconds.
func (p *peers) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: p.namespace, Name: p.leaseName()}}
	if err := p.kube.Delete(ctx, l); err != nil && !apierrors.IsNotFound(err) {
		p.log.Info("Cannot delete this replica's Lease; the others take its clusters once it expires", "reason", err.Error())
	}
}
