package observability

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var dashboardFile = filepath.Join(repo, "charts", "flotilla", "files", "dashboard.json")

type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
}

// grafanaVariable is a Grafana variable in an expression: $name, ${name} or [[name]].
var grafanaVariable = regexp.MustCompile(`\$\{?(\w+)\}?|\[\[(\w+)\]\]`)

// labelValues is a query variable's label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// promQL makes a panel's expression one Prometheus parses: Grafana's interval variables
// become a duration, others (in label matchers) a regular expression.
func promQL(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(v string) string {
		m := grafanaVariable.FindStringSubmatch(v)
		switch m[1] + m[2] {
		case "__rate_interval", "__interval", "__range":
			return "5m"
		default:
			return ".*"
		}
	})
}

func TestDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q: both are needed to import and link it", d.Title, d.UID)
	}
	docs := documented(t)
	ids := map[int]bool{}
	cells := map[[2]int]string{} // the grid cells panels take, which no two may share
	exprs := 0
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
			}
			ids[p.ID] = true
			if p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("panel %q is wider than the dashboard", p.Title)
			}
			for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
				for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
					if other, taken := cells[[2]int{x, y}]; taken {
						t.Errorf("panel %q overlaps %q", p.Title, other)
						return
					}
					cells[[2]int{x, y}] = p.Title
				}
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				exprs++
				for _, problem := range undocumented(promQL(tg.Expr), docs) {
					t.Errorf("panel %q query %s: %s", p.Title, tg.RefID, problem)
				}
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("variable %s: %v", v.Name, err)
			continue
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		for _, problem := range undocumented(m[1], docs) {
			t.Errorf("variable %s: %s", v.Name, problem)
		}
	}
	if exprs == 0 {
		t.Fatal("the dashboard has no queries")
	}
}

// The series a dashboard or rule names must be documented: an undocumented name is caught.
func TestUndocumentedSeriesAreCaught(t *testing.T) {
	docs := map[string]string{"flotilla_a_seconds": "histogram", "flotilla_b_total": "counter"}
	for expr, ok := range map[string]bool{
		`rate(flotilla_b_total[$__rate_interval])`:                     true,
		`histogram_quantile(0.9, rate(flotilla_a_seconds_bucket[5m]))`: true,
		`flotilla_b_total{cluster=~"$cluster"}`:                        true,
		`rate(flotilla_c_total[5m])`:                                   false,
		`flotilla_a_seconds`:                                           false,
		`rate(flotilla_b_total[5m]`:                                    false,
		`vector(1)`:                                                    false,
	} {
		if problems := undocumented(promQL(expr), docs); (len(problems) == 0) != ok {
			t.Errorf("%q: problems %v, want none: %v", expr, problems, ok)
		}
	}
}
