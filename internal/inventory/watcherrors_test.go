package inventory

import (
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

func reflectorOf(kind string) *toolscache.Reflector {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: kind})
	return toolscache.NewReflectorWithOptions(&toolscache.ListWatch{}, u, toolscache.NewStore(toolscache.MetaNamespaceKeyFunc), toolscache.ReflectorOptions{})
}

// TestAFailedWatchIsLoggedOncePerKindWithItsCluster: a kind the spoke no longer serves fails
// its list at every backoff; it is logged once, naming the cluster and the kind, without an
// error's stack trace, and again only when its failure changes or after the watch worked.
func TestAFailedWatchIsLoggedOncePerKindWithItsCluster(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	h := newWatchErrors("spoke-1", log).handle
	backups, widgets := reflectorOf("Backup"), reflectorOf("Widget")
	gone := fmt.Errorf("failed to list *unstructured.Unstructured: %w", apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "backups"}, ""))
	for range 10 {
		h(context.Background(), backups, gone)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"cluster"="spoke-1"`) || !strings.Contains(lines[0], "Kind=Backup") ||
		!strings.Contains(lines[0], "does not serve a kind") {
		t.Fatalf("10 failures of a kind no longer served logged %d lines, want one naming the cluster and kind: %q", len(lines), lines)
	}
	if strings.Contains(lines[0], `"level"=`) && !strings.Contains(lines[0], `"level"=0`) {
		t.Errorf("logged as an error: %s", lines[0])
	}

	h(context.Background(), widgets, gone)
	h(context.Background(), backups, apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: "backups"}, "", fmt.Errorf("no")))
	if len(lines) != 3 || !strings.Contains(lines[1], "Kind=Widget") || !strings.Contains(lines[2], "refuses") {
		t.Fatalf("another kind, then another failure: %q", lines[1:])
	}

	// A spoke that does not answer is the Cluster's Ready condition's to say: verbose only.
	h(context.Background(), widgets, fmt.Errorf("dial tcp 127.0.0.1:1: %w", syscall.ECONNREFUSED))
	// A watch closed normally, or whose resource version expired, is no failure.
	h(context.Background(), widgets, io.EOF)
	h(context.Background(), widgets, apierrors.NewResourceExpired("too old"))
	if len(lines) != 3 {
		t.Fatalf("unreachable or closed watches logged at level 0: %q", lines[3:])
	}
}

func TestWatchFailureClasses(t *testing.T) {
	gr := schema.GroupResource{Group: "example.com", Resource: "backups"}
	for err, want := range map[error]string{
		apierrors.NewNotFound(gr, ""):             watchNotServed,
		apierrors.NewUnauthorized("expired"):      watchRefused,
		fmt.Errorf("x: %w", syscall.ECONNREFUSED): watchUnreachable,
		apierrors.NewServiceUnavailable("down"):   watchUnreachable,
		apierrors.NewResourceExpired("gone"):      "",
		&apierrors.StatusError{ErrStatus: metav1.Status{Code: 410, Reason: metav1.StatusReasonGone}}: "",
		io.EOF: "",
		apierrors.NewInternalError(fmt.Errorf("etcd is unhappy")): watchOther,
	} {
		if got := classOf(err); got != want {
			t.Errorf("classOf(%v) = %q, want %q", err, got, want)
		}
	}
}
