//go:build uitest

package ui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// artifactsEnv names the directory screenshots are written to (a temporary one when unset).
const artifactsEnv = "FLOTILLA_UI_ARTIFACTS"

// browser starts a headless chromium at a laptop's width for the test; the test's end stops it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1366, 900), chromedp.UserDataDir(t.TempDir()))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() }) // stops the browser process it started
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// within runs browser actions, failing the test after timeout.
func within(t *testing.T, ctx context.Context, timeout time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	value(t, ctx, timeout, what, chromedp.Steps(actions...))
}

// value runs a browser action that returns a value, failing the test after timeout.
func value[T any](t *testing.T, ctx context.Context, timeout time.Duration, what string, action chromedp.Action[T]) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(tctx, action)
	if err != nil {
		page, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\npage:\n%s", what, err, page)
	}
	return v
}

// screenshot writes the page as name.png into the artifacts directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png := value(t, ctx, 20*time.Second, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// html is the whole document as the browser holds it now.
func html(t *testing.T, ctx context.Context) string {
	t.Helper()
	return value(t, ctx, 10*time.Second, "read the page", chromedp.OuterHTML(chromedp.CSS("html")))
}
