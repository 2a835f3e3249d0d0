package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// keyCookie keeps the local dashboard's key in the browser that opened its URL.
const keyCookie = "flotilla-dashboard-key"

// newKey returns a random key for the local dashboard's URL: the dashboard acts with the
// user's kubeconfig, so other users and web pages on the machine must not reach it through
// 127.0.0.1 without the URL it printed.
func newKey() string {
	return base64.RawURLEncoding.EncodeToString(randomBytes(24))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// localKey admits requests of the browser that opened the printed URL (its ?key= sets a
// same-site, HTTP-only cookie, and the page is served again without it) and refuses others.
func (s *server) localKey(w http.ResponseWriter, r *http.Request) bool {
	if k := r.URL.Query().Get("key"); k != "" && s.keyMatches(k) {
		http.SetCookie(w, &http.Cookie{Name: keyCookie, Value: k, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		q := u.Query()
		q.Del("key")
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if c, err := r.Cookie(keyCookie); err == nil && s.keyMatches(c.Value) {
		return true
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("Open the dashboard with the URL `flotilla dashboard` printed: it carries the key of this dashboard.\n"))
	return false
}

func (s *server) keyMatches(k string) bool {
	return s.key != "" && subtle.ConstantTimeCompare([]byte(k), []byte(s.key)) == 1
}
