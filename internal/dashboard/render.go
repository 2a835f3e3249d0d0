package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
)

//go:embed web
var webFS embed.FS

// views are the page templates, each parsed with the layout; a page's template defines
// "title" and "content", and the layout puts "content" in the element live updates replace.
var views = func() map[string]*template.Template {
	funcs := template.FuncMap{"lower": strings.ToLower}
	layout := template.Must(template.New("layout").Funcs(funcs).ParseFS(webFS, "web/templates/layout.html"))
	out := map[string]*template.Template{}
	for _, name := range []string{"fleet", "cluster", "owners", "owner", "placements", "placement", "apis", "diff", "login"} {
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(webFS, "web/templates/"+name+".html"))
	}
	return out
}()

// fragmentHeader asks for a page's content alone (what live updates send).
const fragmentHeader = "X-Flotilla-Fragment"

// layoutData is what the layout shows around a page.
type layoutData struct {
	Page any
	Path string
	User string
	Hub  bool
}

// render serves a page: whole, or its content alone for live updates.
func (s *server) render(p page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := viewerOf(r)
		name, data, err := p(v, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		tmpl := "layout"
		var arg any = layoutData{Page: data, Path: r.URL.RequestURI(), User: v.id.User, Hub: s.opts.Hub}
		if r.Header.Get(fragmentHeader) != "" {
			tmpl, arg = "content", data
		}
		var buf bytes.Buffer
		if err := views[name].ExecuteTemplate(&buf, tmpl, arg); err != nil {
			http.Error(w, fmt.Sprintf("render %s: %v", name, err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(buf.Bytes())
	})
}

// refuse answers a request without an identity the hub accepts: browsers get the login page.
func (s *server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if s.opts.Log != nil {
		_, _ = fmt.Fprintf(s.opts.Log, "dashboard: refused %s %s: %v\n", r.Method, r.URL.Path, err)
	}
	if r.URL.Path == "/events" {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_ = views["login"].ExecuteTemplate(w, "layout", layoutData{Page: loginPage{Problem: err != errNoToken}, Hub: true})
}

type loginPage struct {
	Problem bool
}

func (s *server) loginForm(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = views["login"].ExecuteTemplate(w, "layout", layoutData{Page: loginPage{}, Hub: true})
}

// login keeps a token the hub accepts in an HTTP-only cookie, then shows the fleet.
func (s *server) login(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" || !s.opts.Hub {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if _, err := s.authn.review(r.Context(), token); err != nil {
		s.refuse(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
