package dashboard

import (
	"net/http"
	"sort"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// apiCell is one fleet API on one cluster.
type apiCell struct {
	Cluster, Phase, Reason string
	Served                 int64
	Instances              *flotillav1.InstanceCounts
}

type apiRow struct {
	Result   flotillav1.APIResult
	Clusters []apiCell
}

type apiGroup struct {
	Name, Placement string
	Target          int32
	APIs            []apiRow
}

type apisPage struct {
	Denied bool
	Groups []apiGroup
}

func (s *server) apis(v viewer, r *http.Request) (string, any, error) {
	page := apisPage{}
	if !v.canList("apipropagations", "") {
		page.Denied = true
		return "apis", page, nil
	}
	var list flotillav1.APIPropagationList
	if err := s.store.list(r.Context(), "apipropagations", &list); err != nil {
		return "", nil, err
	}
	for _, ap := range list.Items {
		g := apiGroup{Name: ap.Name, Placement: ap.Spec.PlacementRef.Namespace + "/" + ap.Spec.PlacementRef.Name, Target: ap.Status.TargetClusters}
		for _, res := range ap.Status.APIs {
			row := apiRow{Result: res}
			for _, cr := range ap.Status.ClusterResults {
				if cr.API == res.Name {
					row.Clusters = append(row.Clusters, apiCell{Cluster: cr.Cluster, Phase: string(cr.Phase), Reason: cr.Reason, Served: cr.ServedGeneration, Instances: cr.Instances})
				}
			}
			sort.Slice(row.Clusters, func(i, j int) bool { return row.Clusters[i].Cluster < row.Clusters[j].Cluster })
			g.APIs = append(g.APIs, row)
		}
		page.Groups = append(page.Groups, g)
	}
	sort.Slice(page.Groups, func(i, j int) bool { return page.Groups[i].Name < page.Groups[j].Name })
	return "apis", page, nil
}
