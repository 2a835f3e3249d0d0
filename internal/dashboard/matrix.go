package dashboard

import (
	"net/http"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// matrixCols is how many clusters an owner's matrix shows at once; its rows are cut into pages
// of pageSize objects. An owner of a thousand objects on a thousand clusters is thus rendered
// and sent 200 × 50 cells at a time, each row saying how its object stands on every cluster.
const matrixCols = 50

// cellStates are the states a cell may hold, from the one needing the least attention; index 0
// is an object a cluster does not run.
var cellStates = []string{"", stateReady, stateApplied, statePending, stateHeld, stateDrifted, stateConflict, stateFailed}

func stateIndex(s string) uint8 {
	for i, c := range cellStates {
		if c == s {
			return uint8(i)
		}
	}
	return 0
}

// problem says whether a state has a diff to read: drifted, conflicting or failed.
func problem(i uint8) bool { return i >= stateIndex(stateDrifted) }

// cell is one object on one cluster in an owner's matrix.
type cell struct {
	State string
	Diff  string
}

// stateCount is how many cells are in a state.
type stateCount struct {
	State string
	N     int
}

type matrixRow struct {
	Object string
	Cells  []cell
	Tally  []stateCount // the object on every cluster, shown or not
}

// matrix is the part of an owner's objects by cluster that a page shows, with the tally of all.
type matrix struct {
	Clusters []string // the clusters shown, one column each
	Rows     []matrixRow
	Tally    []stateCount // every cell
	Objects  int          // every object
	Problems bool         // only objects drifted, conflicting or failed somewhere
	RowPager pager
	ColPager pager
	All      string // the link without the problems filter
	Filter   string // the link with it
}

// objectRow is one object with its state on each record's cluster.
type objectRow struct {
	describe, name string
	states         []uint8
}

// objectID is an object as a record lists it.
type objectID struct{ kind, namespace, name string }

// buildMatrix computes every cell's state (a byte each), then renders only the cells of the
// request's window (?page= for objects, ?cols= for clusters, ?problems=1 to keep the objects
// with a problem).
func buildMatrix(r *http.Request, o ownerRef, recs []*flotillav1.Delivery, st ownerStatus) (matrix, []int) {
	index := map[objectID]int{}
	var rows []*objectRow
	held := st.held()
	for i, d := range recs {
		res := st.Results[d.Spec.Cluster]
		for _, g := range d.Status.Objects {
			prefix, ok := describePrefix(g.Kind, g.Namespace)
			if !ok {
				continue
			}
			for _, name := range g.Names {
				id := objectID{g.Kind, g.Namespace, name}
				k, seen := index[id]
				if !seen {
					k = len(rows)
					index[id] = k
					rows = append(rows, &objectRow{describe: prefix + name, name: name, states: make([]uint8, len(recs))})
				}
				row := rows[k]
				row.states[i] = stateIndex(objectState(d, object{Describe: row.describe, Name: name}, res, held))
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].describe < rows[j].describe })
	q := r.URL.Query()
	m := matrix{Objects: len(rows), Problems: q.Get("problems") == "1"}
	total := make([]int, len(cellStates))
	shown := rows[:0:0]
	for _, row := range rows {
		bad := false
		for _, s := range row.states {
			total[s]++
			bad = bad || problem(s)
		}
		if bad || !m.Problems {
			shown = append(shown, row)
		}
	}
	m.Tally = tally(total)
	rowFrom, rowTo, rowPager := window(r, len(shown), "page", pageSize)
	colFrom, colTo, colPager := window(r, len(recs), "cols", matrixCols)
	m.RowPager, m.ColPager = rowPager, colPager
	for _, d := range recs[colFrom:colTo] {
		m.Clusters = append(m.Clusters, d.Spec.Cluster)
	}
	for _, row := range shown[rowFrom:rowTo] {
		counts := make([]int, len(cellStates))
		for _, s := range row.states {
			counts[s]++
		}
		out := matrixRow{Object: row.describe, Tally: tally(counts), Cells: make([]cell, 0, colTo-colFrom)}
		for c := colFrom; c < colTo; c++ {
			state := cellStates[row.states[c]]
			out.Cells = append(out.Cells, cell{State: state, Diff: diffPath(o, recs[c].Spec.Cluster, state)})
		}
		m.Rows = append(m.Rows, out)
	}
	m.All, m.Filter = withQuery(r, "problems", ""), withQuery(r, "problems", "1")
	cols := make([]int, 0, colTo-colFrom)
	for c := colFrom; c < colTo; c++ {
		cols = append(cols, c)
	}
	return m, cols
}

// tally lists the states with a count, the empty one (not on the cluster) left out.
func tally(counts []int) []stateCount {
	var out []stateCount
	for i := len(cellStates) - 1; i > 0; i-- {
		if counts[i] > 0 {
			out = append(out, stateCount{State: cellStates[i], N: counts[i]})
		}
	}
	return out
}

// describePrefix is how statuses name an object of a record's kind ("/v1/ConfigMap") in a
// namespace, without its name: "configmap ns/".
func describePrefix(kind, namespace string) (string, bool) {
	gvks := render.ParseKinds([]string{kind})
	if len(gvks) == 0 {
		return "", false
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvks[0])
	u.SetNamespace(namespace)
	return decide.Describe(u), true
}

// withQuery is the request's URL with one query parameter set (removed when value is empty),
// back on the first page.
func withQuery(r *http.Request, key, value string) string {
	q := r.URL.Query()
	q.Del("page")
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	if len(q) == 0 {
		return r.URL.Path
	}
	return r.URL.Path + "?" + q.Encode()
}
