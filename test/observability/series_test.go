package observability

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// repo is the repository's root, from this package's directory.
var repo = filepath.Join("..", "..")

// seriesRow is a row of the series table of docs/operations.md: | `name` | type | labels | meaning |.
var seriesRow = regexp.MustCompile("^\\| `(flotilla_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\|")

// documented returns the series docs/operations.md documents, with their types.
func documented(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := seriesRow.FindStringSubmatch(line); m != nil {
			series[m[1]] = m[2]
		}
	}
	if len(series) == 0 {
		t.Fatal("docs/operations.md documents no series")
	}
	return series
}

// seriesOf parses a PromQL expression and returns the names of the series it selects.
func seriesOf(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
			names = append(names, name)
		}
		return nil
	})
	return names, nil
}

// undocumented returns what is wrong with the series an expression names: it does not parse,
// names none, or names one docs/operations.md does not document (a histogram's series are its
// name with _bucket, _sum or _count).
func undocumented(expr string, docs map[string]string) []string {
	names, err := seriesOf(expr)
	if err != nil {
		return []string{fmt.Sprintf("%q does not parse: %v", expr, err)}
	}
	if len(names) == 0 {
		return []string{fmt.Sprintf("%q names no series", expr)}
	}
	var problems []string
	for _, n := range names {
		if typ, ok := docs[n]; ok {
			if typ == "histogram" {
				problems = append(problems, fmt.Sprintf("%q selects histogram %s itself, not its _bucket, _sum or _count", expr, n))
			}
			continue
		}
		base := n
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, suffix); ok && docs[b] == "histogram" {
				base = b
			}
		}
		if base == n {
			problems = append(problems, fmt.Sprintf("%q names %s, which docs/operations.md does not document", expr, n))
		}
	}
	return problems
}

func TestSeriesOf(t *testing.T) {
	names, err := seriesOf(`histogram_quantile(0.9, sum by (le) (rate(flotilla_a_bucket[5m]))) / on() group_left {__name__="flotilla_b"}`)
	if err != nil || strings.Join(names, ",") != "flotilla_a_bucket,flotilla_b" {
		t.Fatalf("seriesOf: %v %v", names, err)
	}
	if _, err := seriesOf(`sum(rate(flotilla_a[5m])`); err == nil {
		t.Fatal("an unbalanced expression parsed")
	}
}
