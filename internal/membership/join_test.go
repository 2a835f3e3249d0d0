package membership

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"eu-1", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{strings.Repeat("a", 253), false},
		{"eu.west.1", false}, // a DNS-1123 subdomain, not a label
		{"Bad_Name", false},
		{"-eu", false},
		{"", false},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%t", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "DNS-1123 label (at most 63 characters") {
			t.Errorf("ValidateName(%q) = %v; the error does not state the rule", tt.name, err)
		}
	}
}

// TestJoinRefusesLongNameBeforeTouchingAnything joins under a 64-character name (a valid
// DNS-1123 subdomain): the spoke gets no request and the hub no call.
func TestJoinRefusesLongNameBeforeTouchingAnything(t *testing.T) {
	var spokeRequests, hubCalls atomic.Int32
	spoke := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		spokeRequests.Add(1)
		http.NotFound(w, nil)
	}))
	defer spoke.Close()
	count := func() { hubCalls.Add(1) }
	hub := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			count()
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			count()
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count()
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()

	name := strings.Repeat("a", 64)
	err := Join(context.Background(), hub, JoinOptions{
		Name:  name,
		Spoke: &rest.Config{Host: spoke.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, BearerToken: "admin"},
	})
	if err == nil || !strings.Contains(err.Error(), "DNS-1123 label") || !strings.Contains(err.Error(), "63") {
		t.Fatalf("Join error = %v; want the DNS-1123 label rule", err)
	}
	if n := spokeRequests.Load(); n != 0 {
		t.Fatalf("the spoke got %d requests; want 0", n)
	}
	if n := hubCalls.Load(); n != 0 {
		t.Fatalf("the hub got %d calls; want 0", n)
	}
}
