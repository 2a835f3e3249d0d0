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
	"strings"
	"time"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
)

// requestTimeout bounds one request to the hub.
const requestTimeout = 30 * time.Second

// hubClient asks the hub's work endpoint for the cluster's work and posts its results, as the
// cluster's agent: the bearer token is read from tokenFile for every request, so a rotated
// (projected) token is used as soon as it is on disk.
type hubClient struct {
	base      string // the work endpoint, without a trailing slash
	cluster   string
	tokenFile string
	http      *http.Client
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
	return &hubClient{base: strings.TrimSuffix(base, "/"), cluster: cluster, tokenFile: tokenFile,
		http: &http.Client{Transport: transport, Timeout: requestTimeout}}, nil
}

// token reads the agent's token.
func (c *hubClient) token() (string, error) {
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return "", fmt.Errorf("read the agent's token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("the token file %s is empty", c.tokenFile)
	}
	return t, nil
}

func (c *hubClient) do(ctx context.Context, method, path string, body io.Reader, header http.Header) (*http.Response, error) {
	token, err := c.token()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/clusters/"+c.cluster+path, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return c.http.Do(req)
}

// work asks for the cluster's work. With etag (the last answer's), an unchanged work is
// answered 304: changed false. Any failure (no answer, an error status, a body that does not
// decode) is an error, and says nothing about the work.
func (c *hubClient) work(ctx context.Context, etag string) (w clusterwork.Work, newETag string, changed bool, err error) {
	h := http.Header{}
	if etag != "" {
		h.Set("If-None-Match", etag)
	}
	res, err := c.do(ctx, http.MethodGet, "/work", nil, h)
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
	res, err := c.do(ctx, http.MethodPost, "/results", bytes.NewReader(body), http.Header{"Content-Type": {"application/json"}})
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
