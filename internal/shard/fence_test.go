package shard

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A fence is taken when free or expired, never while another replica holds it unexpired; its
// holder stops counting on it two thirds of the way to its expiry when it cannot renew it; and
// releasing it lets the next replica take it at once.
func TestFence(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	key := client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-spoke-1"}
	held := func(holder string, renewed time.Time) *coordinationv1.Lease {
		at := metav1.NewMicroTime(renewed)
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(15)), RenewTime: &at}}
	}
	fenceOf := func(kube client.Client, self string) *fence {
		return &fence{kube: kube, key: key, self: self, duration: 15 * time.Second}
	}

	free := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	if f := fenceOf(free, "hub-0"); !f.acquire(ctx, now) || !f.held(now) {
		t.Error("a free fence was not taken")
	}
	if f := fenceOf(free, "hub-1"); f.acquire(ctx, now) || f.held(now) {
		t.Error("a fence another replica holds was taken")
	}

	expired := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(held("hub-0", now.Add(-16*time.Second))).Build()
	if f := fenceOf(expired, "hub-1"); !f.acquire(ctx, now) {
		t.Error("an expired fence was not taken")
	}

	mine := fenceOf(free, "hub-0")
	if !mine.acquire(ctx, now) {
		t.Fatal("the holder could not renew its fence")
	}
	if !mine.held(now.Add(9 * time.Second)) {
		t.Error("the holder stopped counting on its fence within two thirds of its life")
	}
	if mine.held(now.Add(10 * time.Second)) {
		t.Error("a holder that did not renew still counts on its fence two thirds of the way to its expiry")
	}
	mine.release(ctx)
	if f := fenceOf(free, "hub-1"); !f.acquire(ctx, now.Add(time.Second)) {
		t.Error("a released fence was not taken at once")
	}
}
