package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// The dashboard's only write: an approval of a rollout stage, the annotation
// flotilla.dev/approve=<stage>@<revision> on the owner. It is made with the caller's own
// credentials (the bearer token the request carries, with its impersonation; in local mode the
// kubeconfig user's), never the dashboard's, after a SubjectAccessReview for patch on that
// owner; and only for a POST from a page of this dashboard (same Origin) that carries the
// session's token (csrfToken), so another site cannot make a signed-in browser approve.

// csrfField is the form field that carries the session's token.
const csrfField = "csrf"

// csrfToken is the token of a request's session: an HMAC, keyed by a secret of this process,
// of the credential that identifies the session (the bearer token and impersonation headers, or
// the local dashboard's key).
func (s *server) csrfToken(r *http.Request) string {
	mac := hmac.New(sha256.New, s.csrfKey)
	if s.opts.Hub {
		mac.Write([]byte(bearerToken(r) + "\x00" + r.Header.Get("Impersonate-User") + "\x00" + strings.Join(r.Header.Values("Impersonate-Group"), "\x00")))
	} else if c, err := r.Cookie(keyCookie); err == nil {
		mac.Write([]byte(c.Value))
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// sameOrigin says whether a POST comes from a page of this dashboard: browsers send Origin with
// every POST, and it must name the host the request was sent to.
func sameOrigin(r *http.Request) bool {
	u, err := url.Parse(r.Header.Get("Origin"))
	return err == nil && u.Host != "" && u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}

// approve handles POST /owners/{kind}/{namespace}/{name}/approve with the fields stage,
// revision, csrf and return (the page to show next).
func (s *server) approve(w http.ResponseWriter, r *http.Request) {
	v := viewerOf(r)
	if !sameOrigin(r) || !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(v.csrf)) {
		http.Error(w, "refused: an approval must come from a page of this dashboard", http.StatusForbidden)
		return
	}
	ns := r.PathValue("namespace")
	if ns == "-" {
		ns = ""
	}
	o := ownerRef{APIVersion: flotillav1.GroupVersion.String(), Kind: r.PathValue("kind"), Namespace: ns, Name: r.PathValue("name")}
	if o.Kind != "Propagation" && o.Kind != "ClusterPropagation" {
		http.Error(w, "only a Propagation or ClusterPropagation rolls out with status.rollout", http.StatusBadRequest)
		return
	}
	if !v.mayPatch(o) {
		http.Error(w, "forbidden: you may not patch "+o.String(), http.StatusForbidden)
		return
	}
	stage, revision := r.PostFormValue("stage"), r.PostFormValue("revision")
	st := s.ownerStatus(r.Context(), o)
	if !st.Found || st.Rollout == nil || st.Rollout.Revision != revision ||
		!slices.ContainsFunc(st.Rollout.Stages, func(x flotillav1.RolloutStageStatus) bool { return x.Name == stage }) {
		http.Error(w, "the rollout has moved on: reload the page", http.StatusConflict)
		return
	}
	c, err := s.callerClient(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	obj := ownerObject(o)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, flotillav1.AnnotationApprove, stage+"@"+revision)
	if err := c.Patch(r.Context(), obj, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		http.Error(w, "approve "+o.String()+": "+err.Error(), statusOf(err))
		return
	}
	back := r.PostFormValue("return")
	if !localPath(back) {
		back = o.Path()
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// callerClient is a client of the hub with the caller's credentials: in local mode the
// kubeconfig user's own; on the hub the request's bearer token, impersonating whom the request
// impersonates, and none of the dashboard's credentials.
func (s *server) callerClient(r *http.Request) (client.Client, error) {
	if !s.opts.Hub {
		return s.hub, nil
	}
	cfg := rest.AnonymousClientConfig(s.cfg)
	cfg.BearerToken = bearerToken(r)
	if user := r.Header.Get("Impersonate-User"); user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: r.Header.Values("Impersonate-Group")}
	}
	cfg.UserAgent = "flotilla-dashboard"
	return client.New(cfg, client.Options{Scheme: install.Scheme(), Mapper: s.hub.RESTMapper()})
}

func ownerObject(o ownerRef) client.Object {
	if o.Kind == "ClusterPropagation" {
		return &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	}
	return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
}

// localPath says whether p is a path of this dashboard, safe to redirect to.
func localPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsAny(p, "\\\r\n")
}

// statusOf is the HTTP status of an API server's error (403 when it refuses the caller).
func statusOf(err error) int {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code != 0 {
		return int(st.Status().Code)
	}
	return http.StatusBadGateway
}
