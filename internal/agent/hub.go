package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
)

// requestTimeout bounds one request to the hub.
const requestTimeout = 30 * time.Second

// hubClient asks the hub's work endpoint for the cluster's work and posts its results, as the
// cluster's agent, with the bearer token its tokenSource gives: read from a file for every
// request (a rotated projected token is used as soon as it is on disk), or requested and
// renewed with the agent's hub credential (renew.go), in which case a token the endpoint
// refuses (401) is replaced and the request made once more at once.
type hubClient struct {
	base    string // the work endpoint, without a trailing slash
	cluster string
	tokens  tokenSource
	http    *http.Client
}

func newHubClient(base, cluster, tokenFile, caFile string) (*hubClient, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("the hub's work URL %q is not an http(s) URL", base)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read the hub's CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the hub's CA file %s holds no PEM certificate", caFile)
		}
		transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	}
	return &hubClient{base: strings.TrimSuffix(base, "/"), cluster: cluster, tokens: fileToken(tokenFile),
		http: &http.Client{Transport: transport, Timeout: requestTimeout}}, nil
}

func (c *hubClient) do(ctx context.Context, method, path string, body []byte, header http.Header) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		token, err := c.tokens.token(ctx)
		if err != nil {
			return nil, err
		}
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.base+"/clusters/"+c.cluster+path, r)
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.http.Do(req)
		if err != nil || res.StatusCode != http.StatusUnauthorized || attempt > 0 || !c.tokens.refused() {
			return res, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
		_ = res.Body.Close()
	}
}

// maxHold bounds how long the agent asks the hub to hold a request: well within requestTimeout.
const maxHold = requestTimeout / 2

// work asks for the cluster's work. With etag (the last answer's), an unchanged work is
// answered 304: changed false; the hub is asked to hold the request until the work changes,
// for up to hold (whole seconds, at most maxHold), so that a change arrives as soon as the hub
// has it rather than at the next poll (a hub that does not hold answers at once). Any failure
// (no answer, an error status, a body that does not decode) is an error, and says nothing
// about the work.
func (c *hubClient) work(ctx context.Context, etag string, hold time.Duration) (w clusterwork.Work, newETag string, changed bool, err error) {
	h := http.Header{}
	path := "/work"
	if etag != "" {
		h.Set("If-None-Match", etag)
		if secs := int(min(hold, maxHold) / time.Second); secs > 0 {
			path += "?" + clusterwork.WaitParameter + "=" + strconv.Itoa(secs)
		}
	}
	res, err := c.do(ctx, http.MethodGet, path, nil, h)
	if err != nil {
		return w, "", false, err
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusNotModified:
		return w, etag, false, nil
	case http.StatusOK:
	default:
		return w, "", false, statusError(res)
	}
	if err := json.NewDecoder(res.Body).Decode(&w); err != nil {
		return w, "", false, fmt.Errorf("the hub's answer does not decode: %w", err)
	}
	if w.Cluster != c.cluster {
		return w, "", false, fmt.Errorf("the hub answered with the work of cluster %q", w.Cluster)
	}
	return w, res.Header.Get("ETag"), true, nil
}

// post sends results; it returns what the hub wrote and skipped.
func (c *hubClient) post(ctx context.Context, results clusterwork.Results) (clusterwork.Written, error) {
	var out clusterwork.Written
	body, err := json.Marshal(results)
	if err != nil {
		return out, err
	}
	res, err := c.do(ctx, http.MethodPost, "/results", body, http.Header{"Content-Type": {"application/json"}})
	if err != nil {
		return out, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return out, statusError(res)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("the hub's answer does not decode: %w", err)
	}
	return out, nil
}

// statusError describes an error answer by its status and the first line the hub gave (the
// hub's messages name no object's content).
func statusError(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	msg, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return fmt.Errorf("the hub answered %s: %s", res.Status, msg)
}
