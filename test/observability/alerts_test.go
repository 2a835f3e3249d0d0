package observability

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	rulesFile = filepath.Join(repo, "charts", "flotilla", "files", "alerts.yaml")
	rulesTest = filepath.Join("testdata", "alerts_test.yaml")
)

// promtool returns the promtool `make verify` builds (PROMTOOL, or bin/promtool).
func promtool(t *testing.T) string {
	t.Helper()
	path := os.Getenv("PROMTOOL")
	if path == "" {
		path = filepath.Join(repo, "bin", "promtool")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("promtool not found at %s: run `make observability` (or `make verify`) first", path)
	}
	return path
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
	}
}

func TestAlertRulesPassPromtool(t *testing.T) {
	tool := promtool(t)
	run(t, tool, "check", "rules", "--lint=all", "--lint-fatal", rulesFile)
	run(t, tool, "test", "rules", rulesTest)
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// readYAML reads the parts of a YAML file the test looks at.
func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Every alert is tested both ways: a case where it fires and one where it stays quiet; every
// alert has a severity; every rule names only documented series.
func TestEveryAlertIsTestedAndNamesDocumentedSeries(t *testing.T) {
	var rules ruleFile
	readYAML(t, rulesFile, &rules)
	var tests ruleTests
	readYAML(t, rulesTest, &tests)
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	docs := documented(t)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("alert %s: tested firing %v, tested quiet %v; want both", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("alert %s: severity %q", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: a summary and a description tell the person paged what to do", r.Alert)
			}
			for _, p := range undocumented(r.Expr, docs) {
				t.Errorf("alert %s: %s", r.Alert, p)
			}
		}
	}
	if n == 0 {
		t.Fatal("no alerts")
	}
}
