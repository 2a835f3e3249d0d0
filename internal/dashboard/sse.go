package dashboard

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// debounce gathers the cache's changes for this long before pages are rendered again: a
// delivery writes a few objects at once, and one update is enough.
const debounce = 100 * time.Millisecond

// heartbeat keeps idle streams open through proxies.
const heartbeat = 20 * time.Second

// events streams a page's content to its viewer each time it changes, as server-sent events:
// the page is rendered again from the cache when the cache changes (never by reading the API
// server), and sent only when its HTML differs from what was sent last.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	target, err := url.Parse(r.URL.Query().Get("page"))
	if err != nil || !strings.HasPrefix(target.Path, "/") || target.Host != "" || strings.Contains(target.Path, "/diff/") {
		http.Error(w, "events need the path of a live page", http.StatusBadRequest)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	var last []byte
	for {
		_, changed := s.store.watch()
		body, status := s.fragment(r, target)
		if status != http.StatusOK {
			_ = writeEvent(w, "error", []byte(http.StatusText(status)))
			flusher.Flush()
			return
		}
		if !bytes.Equal(body, last) {
			if err := writeEvent(w, "page", body); err != nil {
				return
			}
			flusher.Flush()
			last = body
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
			select { // gather what changes with it
			case <-r.Context().Done():
				return
			case <-time.After(debounce):
			}
		case <-time.After(heartbeat):
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// fragment renders a page's content for the events' viewer.
func (s *server) fragment(r *http.Request, target *url.URL) ([]byte, int) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, target.RequestURI(), nil)
	if err != nil {
		return nil, http.StatusBadRequest
	}
	req.Header.Set(fragmentHeader, "1")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	s.pages.ServeHTTP(rec, req)
	return rec.body.Bytes(), rec.status
}

// writeEvent writes one event; each line of data is a data: field.
func writeEvent(w http.ResponseWriter, name string, data []byte) error {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for _, line := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// recorder keeps what a page handler writes.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) WriteHeader(status int)      { r.status = status }
