package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// execute runs the flotilla command line against hub (nil: no hub is set up) and returns
// what it printed and the error main would turn into the exit status (2 for a UsageError).
func execute(ctx context.Context, hub client.WithWatch, out *syncBuffer, args ...string) error {
	cmd := newRootCommand(&hubFlags{hub: hub})
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

// run executes a command that ends on its own.
func run(t *testing.T, hub client.WithWatch, args ...string) (string, error) {
	t.Helper()
	var out syncBuffer
	err := execute(context.Background(), hub, &out, args...)
	return out.String(), err
}

// wantUsage fails unless err is a usage error (exit status 2) saying each of wants.
func wantUsage(t *testing.T, err error, wants ...string) {
	t.Helper()
	var usage UsageError
	if !errors.As(err, &usage) {
		t.Errorf("error = %v; want a usage error", err)
		return
	}
	wantError(t, err, wants...)
}

// wantError fails unless err says each of wants.
func wantError(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error; want one saying %q", wants)
		return
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

// syncBuffer is a bytes.Buffer a command may write while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestUnknownCommandsFail(t *testing.T) {
	_, err := run(t, nil, "statsu", "web")
	wantError(t, err, `unknown command "statsu" for "flotilla"`, "status")

	_, err = run(t, nil, "cluster", "drian", "eu-1")
	wantUsage(t, err, `unknown command "drian" for "flotilla cluster"; did you mean "drain"?`)
	_, err = run(t, nil, "dev", "down")
	wantUsage(t, err, `unknown command "down" for "flotilla dev"`)

	for _, group := range []string{"cluster", "dev"} {
		out, err := run(t, nil, group)
		if err != nil || !strings.Contains(out, "Available Commands:") {
			t.Errorf("flotilla %s: error %v, output %q; want its help", group, err, out)
		}
	}
}
