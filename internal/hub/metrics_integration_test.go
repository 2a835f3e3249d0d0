package hub

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestMetricsNeedAuthorization runs the hub controller with its default metrics endpoint and
// scrapes it as nobody, as a ServiceAccount of the hub without the reader role, and as one
// bound to config/rbac's flotilla-metrics-reader: only the last is served.
func TestMetricsNeedAuthorization(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub())
	ctx := context.Background()
	hubCfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, reader); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	scraper, stranger := token("scraper"), token("stranger")
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	addr := freeAddress(t)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(runCtx, hubCfg, Options{MetricsAddr: addr, HealthAddr: "0"}) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("hub controller: %v", err)
		}
	})

	// The endpoint's certificate is its own, self-signed: the scrape checks who asks, not who
	// answers.
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	scrape := func(bearer string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	expect := func(who, bearer string, want int, contains string) {
		t.Helper()
		fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("a scrape %s answered %d", who, want), func() error {
			code, body, err := scrape(bearer)
			if err != nil {
				return err
			}
			if code != want || !strings.Contains(body, contains) {
				return fmt.Errorf("answered %d: %.200s", code, body)
			}
			return nil
		})
	}
	expect("without credentials", "", http.StatusUnauthorized, "")
	expect("with a token of no reader", stranger, http.StatusForbidden, "")
	expect("as flotilla-metrics-reader", scraper, http.StatusOK, "controller_runtime_reconcile_total")
	// A token the hub does not know: the TokenReview fails, and controller-runtime's filter
	// answers 500; refused all the same.
	if code, body, err := scrape("not-a-token"); err != nil || code == http.StatusOK || strings.Contains(body, "controller_runtime") {
		t.Errorf("a forged token: %d %v %.200s", code, err, body)
	}

	t.Run("plain HTTP is not served", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // a test's one request
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Errorf("plain HTTP served the metrics: %.200s", body)
			}
		}
	})
}

// freeAddress returns a loopback address with a port nothing listens on now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
