package dashboard

import (
	"context"
	"io/fs"
	"net/http"
)

// page renders one view's data for its viewer: the template's name and its data.
type page func(v viewer, r *http.Request) (string, any, error)

func (s *server) routes() {
	s.pages = http.NewServeMux()
	for pattern, p := range map[string]page{
		"GET /{$}":                              s.fleet,
		"GET /clusters/{name}":                  s.cluster,
		"GET /owners":                           s.owners,
		"GET /owners/{kind}/{namespace}/{name}": s.owner,
		"GET /owners/{kind}/{namespace}/{name}/diff/{cluster}": s.diff,
		"GET /placements":                    s.placements,
		"GET /placements/{namespace}/{name}": s.placement,
		"GET /apis":                          s.apis,
	} {
		s.pages.Handle(pattern, s.render(p))
	}
}

// handler is every route: static files and login without a viewer, pages and events with one.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFS, "web/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServer(http.FS(static))))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /login", s.loginForm)
	mux.HandleFunc("POST /login", s.login)
	mux.Handle("GET /events", s.withViewer(http.HandlerFunc(s.events)))
	mux.Handle("POST /owners/{kind}/{namespace}/{name}/approve", s.withViewer(http.HandlerFunc(s.approve)))
	mux.Handle("/", s.withViewer(s.pages))
	return securityHeaders(mux)
}

type viewerKey struct{}

// withViewer finds the request's viewer: the kubeconfig user, or on the hub the caller.
func (s *server) withViewer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := viewer{auth: s.authz, ctx: r.Context()}
		if !s.opts.Hub && !s.localKey(w, r) {
			return
		}
		if s.opts.Hub {
			id, err := s.authn.identify(r)
			if err != nil {
				s.refuse(w, r, err)
				return
			}
			v.id = id
		}
		v.key, v.csrf = v.id.key(), s.csrfToken(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, v)))
	})
}

func viewerOf(r *http.Request) viewer {
	v, _ := r.Context().Value(viewerKey{}).(viewer)
	v.ctx = r.Context()
	return v
}

// securityHeaders keeps pages from being framed or sniffed, and scripts to the dashboard's own.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
