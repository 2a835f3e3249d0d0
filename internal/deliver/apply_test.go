package deliver

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
)

// A refusal the apply decision makes is permanent: the same object is refused again until the
// owner's content or strategy changes, so it is retried only rarely. A failure to reach the
// cluster is not.
func TestPermanent(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"out of scope", fmt.Errorf("configmap kube-system/x: %w", decide.ErrOutOfScope), true},
		{"unmanaged, not adopted", fmt.Errorf("configmap team/x: %w", decide.ErrConflict), true},
		{"held by another owner", fmt.Errorf("configmap team/x: %w", decide.ErrHeld), true},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), true},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("no")), true},
		{"unavailable", apierrors.NewServiceUnavailable("later"), false},
		{"timeout", apierrors.NewTimeoutError("slow", 1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := permanent(c.err); got != c.want {
				t.Errorf("permanent(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestJoinBounded(t *testing.T) {
	long := make([]string, 100)
	for i := range long {
		long[i] = "configmap ns/some-object-name: the server rejected it"
	}
	if got := joinBounded(long); len(got) > maxMessage+3 {
		t.Fatalf("message of %d bytes", len(got))
	}
}
