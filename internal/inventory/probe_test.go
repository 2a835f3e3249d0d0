package inventory

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestClassify(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:1/readyz", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name       string
		err        error
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"connection refused", refused, metav1.ConditionUnknown, flotillav1.ReasonUnreachable},
		{"deadline", fmt.Errorf("probe: %w", context.DeadlineExceeded), metav1.ConditionUnknown, flotillav1.ReasonUnreachable},
		{"unauthorized", apierrors.NewUnauthorized("bad token"), metav1.ConditionFalse, flotillav1.ReasonUnauthorized},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{}, "readyz", errors.New("no")), metav1.ConditionFalse, flotillav1.ReasonForbidden},
		{"unknown authority", &url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, metav1.ConditionFalse, flotillav1.ReasonCertificateInvalid},
		{"hostname mismatch", &url.Error{Op: "Get", URL: "u", Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"}}, metav1.ConditionFalse, flotillav1.ReasonCertificateInvalid},
		{"not found", apierrors.NewNotFound(schema.GroupResource{}, "readyz"), metav1.ConditionFalse, flotillav1.ReasonNotKubernetes},
		{"internal error", apierrors.NewInternalError(errors.New("etcd down")), metav1.ConditionFalse, flotillav1.ReasonNotReady},
		{"service unavailable", apierrors.NewServiceUnavailable("shutting down"), metav1.ConditionUnknown, flotillav1.ReasonUnreachable},
		{"something else", errors.New("garbled answer"), metav1.ConditionFalse, flotillav1.ReasonNotKubernetes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err)
			if got.status != tt.wantStatus || got.reason != tt.wantReason {
				t.Fatalf("classify(%v) = %s", tt.err, got)
			}
			if got.message == "" {
				t.Fatal("empty message")
			}
		})
	}
}
