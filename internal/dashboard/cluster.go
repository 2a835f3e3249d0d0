package dashboard

import (
	"net/http"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// runRow is one object running on a cluster, with who put it there.
type runRow struct {
	Object    string
	Owner     ownerRef
	Placement placementLink
	State     string
	Diff      string // the diff page's path, for a drifted or failed object
}

type clusterPage struct {
	Name    string
	Cluster *clusterRow
	Rows    []runRow
	Records int
	Pager   pager
}

func (s *server) cluster(v viewer, r *http.Request) (string, any, error) {
	ctx := r.Context()
	name := r.PathValue("name")
	page := clusterPage{Name: name}
	if v.canList("clusters", "") {
		c := &flotillav1.Cluster{}
		if s.store.cached["clusters"] && s.store.reader.Get(ctx, keyOf("", name), c) == nil {
			row := rowOf(c)
			page.Cluster = &row
		}
	}
	recs := s.records(ctx, v, func(d *flotillav1.Delivery) bool { return d.Spec.Cluster == name })
	page.Records = len(recs)
	statuses := map[ownerRef]ownerStatus{}
	index := s.placementIndex(ctx, v)
	for _, d := range recs {
		o := refOf(d)
		st, ok := statuses[o]
		if !ok {
			st = s.ownerStatus(ctx, o)
			statuses[o] = st
		}
		pl := index.of(d)
		for _, obj := range objectsOf(d) {
			row := runRow{Object: obj.Describe, Owner: o, Placement: pl, State: objectState(d, obj, st.Results[name], st.held())}
			row.Diff = diffPath(o, name, row.State)
			page.Rows = append(page.Rows, row)
		}
	}
	page.Rows, page.Pager = paginate(r, page.Rows)
	return "cluster", page, nil
}
