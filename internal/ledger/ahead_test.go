package ledger

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// The writes a delivery waits for (a record prepared, spec.work written ahead) go through
// Ahead, so that they never wait behind the writes aside, which go through Hub.
func TestWritesAheadGoThroughAhead(t *testing.T) {
	ctx := context.Background()
	store := fake.NewClientBuilder().WithScheme(install.Scheme()).WithStatusSubresource(&flotillav1.Delivery{}).Build()
	var ahead, aside []string
	counting := func(into *[]string, what string) interceptor.Funcs {
		return interceptor.Funcs{
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				*into = append(*into, what)
				return c.Apply(ctx, obj, opts...)
			},
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				*into = append(*into, what+"/"+sub)
				return c.SubResource(sub).Apply(ctx, obj, opts...)
			},
		}
	}
	l := &Ledger{Hub: interceptor.NewClient(store, counting(&aside, "aside")), Ahead: interceptor.NewClient(store, counting(&ahead, "ahead"))}
	owner := Owner{Owner: render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, APIVersion: "flotilla.dev/v1alpha1", ObjectKind: "Propagation"}

	if _, err := l.Prepare(ctx, owner, "eu", []string{"v1/ConfigMap"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteWork(ctx, owner.Owner, "eu", flotillav1.DeliveryWork{Revision: "propagation.web.1", Digest: "d1"}); err != nil {
		t.Fatal(err)
	}
	if len(ahead) != 2 || len(aside) != 0 {
		t.Fatalf("a record prepared and spec.work written ahead: %d writes through Ahead, %d through Hub (%v %v), want 2 and 0", len(ahead), len(aside), ahead, aside)
	}
	// Aside: spec.work queued (RecordWork's worker), and the record's status.
	if err := l.writeWork(ctx, pair{owner.Owner, "eu"}, flotillav1.DeliveryWork{Revision: "propagation.web.2", Digest: "d2"}, false); err != nil {
		t.Fatal(err)
	}
	if err := l.writeStatus(ctx, owner.Owner, "eu", flotillav1.DeliveryStatus{Revision: "d2", Applied: 1}); err != nil {
		t.Fatal(err)
	}
	if len(ahead) != 2 || len(aside) != 2 {
		t.Errorf("writes aside: %v through Hub, Ahead made %v; want 2 through Hub, none more through Ahead", aside, ahead)
	}
	// Without Ahead, Hub makes every write.
	l.Ahead = nil
	if err := l.WriteWork(ctx, owner.Owner, "eu", flotillav1.DeliveryWork{Revision: "propagation.web.3", Digest: "d3"}); err != nil {
		t.Fatal(err)
	}
	if len(aside) != 3 {
		t.Errorf("without Ahead, spec.work written ahead did not go through Hub: %v", aside)
	}
}
