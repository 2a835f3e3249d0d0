//go:build uitest

package ui

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/test/e2e/e2etest"
)

// canary is the Secret value of testdata/teams.yaml; edited is what the test changes it to on
// the spoke.
const (
	canary = "canary-ui-s3cr3t-f1071lla"
	edited = canary + "-edited-on-the-spoke"
)

// TestDashboard drives the dashboard in chromium on a fleet of a hub and three spokes: the
// fleet page lists the clusters; applying examples/propagation.yaml turns its cells Ready
// without a reload; a drift on a spoke shows its cell and diff within 2 s; the cluster view
// names each object's owner and Placement; and on the hub's dashboard a viewer of team-a sees
// team-a's owners only, and no Secret value in any page or event stream.
func TestDashboard(t *testing.T) {
	started := time.Now()
	flotilla := e2etest.BuildFlotilla(t)
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.FullSpoke("spoke-1", nil),
		fleettest.APIOnlySpoke("spoke-2"), fleettest.APIOnlySpoke("spoke-3"))
	hubKC := fleet.Hub().KubeconfigPath()
	e2etest.Run(t, flotilla, "install", "--crds-only", "--hub-kubeconfig", hubKC)
	hubOut := e2etest.StartProcess(t, flotilla, "hub", "--hub-kubeconfig", hubKC, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--probe-interval=1s",
		"--dashboard-bind-address=127.0.0.1:0")
	for name, region := range map[string]string{"spoke-1": "eu-west", "spoke-2": "us-east", "spoke-3": "ap-south"} {
		e2etest.Run(t, flotilla, "join", name, "--hub-kubeconfig", hubKC, "--kubeconfig", fleet.Plane(name).KubeconfigPath(), "--label", "region="+region)
	}
	local, withKey := dashboardURL(t, e2etest.StartProcess(t, flotilla, "dashboard", "--hub-kubeconfig", hubKC, "--open=false", "--address=127.0.0.1:0"))
	hubDashboard, _ := dashboardURL(t, hubOut)
	t.Logf("fleet, hub and dashboards up in %s", time.Since(started).Round(time.Second))
	ctx := browser(t)

	t.Run("fleet lists the clusters", func(t *testing.T) {
		if resp, err := http.Get(local + "/"); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the local dashboard without its key: %v %v", resp, err)
		} else {
			_ = resp.Body.Close()
		}
		within(t, ctx, 60*time.Second, "three Ready clusters", chromedp.Navigate(withKey),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="spoke-1"] .state-ready`)),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="spoke-2"] .state-ready`)),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="spoke-3"] .state-ready`)))
		screenshot(t, ctx, "fleet")
		within(t, ctx, 20*time.Second, "filter by label", chromedp.Navigate(local+"/?selector=region%3Deu-west"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="spoke-1"]`)))
		shown := value(t, ctx, 5*time.Second, "the filtered rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr[data-cluster]")].map(r => r.dataset.cluster)`))
		if strings.Join(shown, ",") != "spoke-1" {
			t.Errorf("region=eu-west shows %v, want spoke-1 alone", shown)
		}
	})

	owner := local + "/owners/Propagation/web-demo/web"
	cell := func(object, state string) string {
		return fmt.Sprintf(`td[data-object=%q][data-state=%q]`, object, state)
	}
	t.Run("cells turn Ready without reload", func(t *testing.T) {
		within(t, ctx, 20*time.Second, "open the owner page", chromedp.Navigate(owner),
			chromedp.WaitVisible(chromedp.CSS(`main#live`)))
		value(t, ctx, 5*time.Second, "mark the page", chromedp.Evaluate[bool](`window.notReloaded = true`))
		e2etest.MustKubectl(t, hubKC, "apply", "-f", "../../examples/propagation.yaml")
		within(t, ctx, 90*time.Second, "both cells Ready",
			chromedp.WaitVisible(chromedp.CSS(cell("configmap web-demo/web-config", "Ready"))),
			chromedp.WaitVisible(chromedp.CSS(cell("deployment.apps web-demo/web", "Ready"))))
		if !value(t, ctx, 5*time.Second, "read the mark", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
			t.Fatal("the page was reloaded")
		}
		screenshot(t, ctx, "owner")
	})

	t.Run("a drift shows with its diff within 2s", func(t *testing.T) {
		e2etest.MustKubectl(t, hubKC, "patch", "propagation", "web", "-n", "web-demo", "--type=merge", "-p", `{"spec":{"strategy":{"drift":"Report"}}}`)
		e2etest.EventuallyKubectl(t, hubKC, "2 2", "get", "propagation", "web", "-n", "web-demo", "-o", "jsonpath={.metadata.generation} {.status.observedGeneration}")
		e2etest.MustKubectl(t, fleet.Plane("spoke-1").KubeconfigPath(), "patch", "configmap", "web-config", "-n", "web-demo", "--type=merge", "-p", `{"data":{"greeting":"changed on the spoke"}}`)
		drifted := time.Now()
		within(t, ctx, 2*time.Second, "the drifted cell and its diff",
			chromedp.WaitVisible(chromedp.CSS(cell("configmap web-demo/web-config", "Drifted"))),
			chromedp.Click(chromedp.CSS(cell("configmap web-demo/web-config", "Drifted")+" a")),
			chromedp.WaitVisible(chromedp.Search(`//td[contains(@class,"live")]/code[text()="changed on the spoke"]`)),
			chromedp.WaitVisible(chromedp.Search(`//td[contains(@class,"desired")]/code[text()="hello from the hub"]`)))
		t.Logf("drifted cell and diff shown %s after the edit", time.Since(drifted).Round(time.Millisecond))
		screenshot(t, ctx, "diff")
		within(t, ctx, 10*time.Second, "back to the owner", chromedp.NavigateBack(),
			chromedp.WaitVisible(chromedp.CSS(cell("configmap web-demo/web-config", "Drifted"))))
		screenshot(t, ctx, "owner-drifted")
	})

	t.Run("cluster view names owner and Placement", func(t *testing.T) {
		within(t, ctx, 20*time.Second, "the cluster view", chromedp.Navigate(local+"/clusters/spoke-1"),
			chromedp.WaitVisible(chromedp.CSS(`table.runs tbody tr`)))
		rows := value(t, ctx, 5*time.Second, "read the rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.runs tbody tr")].map(r => r.innerText)`))
		if len(rows) != 2 {
			t.Fatalf("spoke-1 runs %d objects, want the ConfigMap and the Deployment: %q", len(rows), rows)
		}
		for _, r := range rows {
			if !strings.Contains(r, "Propagation web-demo/web") || !strings.Contains(r, "web-demo/europe") {
				t.Errorf("row %q does not name its owner and Placement", r)
			}
		}
		screenshot(t, ctx, "cluster")
		within(t, ctx, 20*time.Second, "the Placement view", chromedp.Navigate(local+"/placements/web-demo/europe"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="spoke-1"]`)))
		screenshot(t, ctx, "placement")
		within(t, ctx, 20*time.Second, "the fleet API view", chromedp.Navigate(local+"/apis"), chromedp.WaitVisible(chromedp.CSS(`h1`)))
		screenshot(t, ctx, "apis")
	})

	t.Run("a team-a viewer sees team-a only and no Secret value", func(t *testing.T) {
		spoke1 := fleet.Plane("spoke-1").KubeconfigPath()
		e2etest.MustKubectl(t, hubKC, "apply", "-f", "testdata/teams.yaml")
		e2etest.EventuallyKubectl(t, spoke1, base64.StdEncoding.EncodeToString([]byte(canary)), "get", "secret", "db", "-n", "team-a", "-o", "jsonpath={.data.password}")
		e2etest.MustKubectl(t, spoke1, "patch", "secret", "db", "-n", "team-a", "--type=merge", "-p", `{"stringData":{"password":"`+edited+`"}}`)
		token := strings.TrimSpace(e2etest.MustKubectl(t, hubKC, "create", "token", "viewer", "-n", "team-a", "--duration=1h"))

		within(t, ctx, 20*time.Second, "sign in", chromedp.Navigate(hubDashboard+"/login"),
			chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Submit(chromedp.ID("token")),
			chromedp.WaitVisible(chromedp.Search(`//p[contains(., "You may not list Clusters")]`)))
		noSecret(t, "the fleet page", html(t, ctx))
		within(t, ctx, 60*time.Second, "team-a's owners", chromedp.Navigate(hubDashboard+"/owners"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-owner="Propagation team-a/app-a"]`)))
		page := html(t, ctx)
		if strings.Contains(page, "team-b") || strings.Contains(page, "web-demo") {
			t.Errorf("the team-a viewer sees other namespaces' owners:\n%s", page)
		}
		screenshot(t, ctx, "owners-team-a")
		secretCell := cell("secret team-a/db", "Drifted")
		within(t, ctx, 60*time.Second, "team-a's drifted Secret", chromedp.Navigate(hubDashboard+"/owners/Propagation/team-a/app-a"),
			chromedp.WaitVisible(chromedp.CSS(secretCell)))
		noSecret(t, "the owner page", html(t, ctx))
		noSecret(t, "the owner page's event stream", firstEvent(t, hubDashboard, "/owners/Propagation/team-a/app-a", token))
		noSecret(t, "the cluster page's event stream", firstEvent(t, hubDashboard, "/clusters/spoke-1", token))
		within(t, ctx, 20*time.Second, "the Secret's diff", chromedp.Click(chromedp.CSS(secretCell+" a")),
			chromedp.WaitVisible(chromedp.Search(`//section[@aria-label="secret team-a/db"]//code[contains(., "***")]`)))
		noSecret(t, "the diff page", html(t, ctx))
		screenshot(t, ctx, "diff-secret-masked")
		within(t, ctx, 20*time.Second, "the cluster page", chromedp.Navigate(hubDashboard+"/clusters/spoke-1"),
			chromedp.WaitVisible(chromedp.CSS(`table.runs tbody tr`)))
		page = html(t, ctx)
		noSecret(t, "the cluster page", page)
		if strings.Contains(page, "team-b") || strings.Contains(page, "web-demo") || !strings.Contains(page, "Propagation team-a/app-a") {
			t.Errorf("the team-a viewer's cluster page:\n%s", page)
		}
	})
	t.Logf("test done in %s", time.Since(started).Round(time.Second))
}

// noSecret fails the test when text holds the canary, edited or not, plain or base64.
func noSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, v := range []string{canary, base64.StdEncoding.EncodeToString([]byte(canary)), base64.StdEncoding.EncodeToString([]byte(edited))} {
		if strings.Contains(text, v) {
			t.Errorf("%s shows the Secret's value %q", where, v)
		}
	}
}

// firstEvent reads the first event the dashboard streams for a page, as the token's user.
func firstEvent(t *testing.T, base, page, token string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?page="+url.QueryEscape(page), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events of %s: %s", page, resp.Status)
	}
	var data []string
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<22)
	for lines.Scan() {
		line := lines.Text()
		if line == "" && len(data) > 0 {
			return strings.Join(data, "\n")
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	t.Fatalf("events of %s ended: %v", page, lines.Err())
	return ""
}
