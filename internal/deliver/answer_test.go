package deliver

import (
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Only the spoke itself not answering waits for /readyz: an error the API server answers with
// is not, even when its message names a dropped connection (a webhook's, an aggregated API's),
// or the job would be queued again every answerPoll while /readyz says ok.
func TestUnanswered(t *testing.T) {
	refused := &url.Error{Op: "Patch", URL: "https://spoke", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
	reset := &url.Error{Op: "Get", URL: "https://spoke", Err: &net.OpError{Op: "read", Net: "tcp",
		Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
	webhook := apierrors.NewInternalError(errors.New(`failed calling webhook "v.example.com": read tcp: connection reset by peer`))
	aggregated := apierrors.NewServiceUnavailable("error trying to reach service: use of closed network connection")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"connection reset", reset, true},
		{"wrapped", errors.Join(errors.New("apply team/web"), refused), true},
		{"a webhook's dropped connection", webhook, false},
		{"an aggregated API's", aggregated, false},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "web"), false},
	} {
		if got := unanswered(c.err); got != c.want {
			t.Errorf("%s: unanswered %v, want %v", c.name, got, c.want)
		}
	}
}
