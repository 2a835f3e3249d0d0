package dashboard

import (
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// clusterRow is one Cluster on the fleet page.
type clusterRow struct {
	Name, Version, Source, ReadyReason string
	Credentials, CredentialsDetail     string
	Ready, Cordoned                    bool
	Nodes, ReadyNodes, Placements      int32
	CPU, Memory                        string
	Taints, Labels                     []string
}

type fleetPage struct {
	Selector string
	Error    string
	Denied   bool
	Clusters []clusterRow
	Pager    pager
}

func (s *server) fleet(v viewer, r *http.Request) (string, any, error) {
	page := fleetPage{Selector: r.URL.Query().Get("selector")}
	if !v.canList("clusters", "") {
		page.Denied = true
		return "fleet", page, nil
	}
	sel, err := labels.Parse(page.Selector)
	if err != nil {
		page.Error = "The label filter is not a label selector: " + err.Error()
		sel = labels.Everything()
	}
	var list flotillav1.ClusterList
	if err := s.store.list(r.Context(), "clusters", &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", nil, err
	}
	for _, c := range list.Items {
		page.Clusters = append(page.Clusters, rowOf(&c))
	}
	sort.Slice(page.Clusters, func(i, j int) bool { return page.Clusters[i].Name < page.Clusters[j].Name })
	page.Clusters, page.Pager = paginate(r, page.Clusters)
	return "fleet", page, nil
}

func rowOf(c *flotillav1.Cluster) clusterRow {
	row := clusterRow{
		Name: c.Name, Version: c.Status.KubernetesVersion, Source: c.Labels[flotillav1.LabelSource],
		Nodes: c.Status.NodeCount, ReadyNodes: c.Status.ReadyNodeCount, Placements: c.Status.Placements,
		Cordoned: c.Spec.Unschedulable,
	}
	if row.Source == "" {
		row.Source = "joined"
	}
	if ready := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady); ready != nil {
		row.Ready, row.ReadyReason = ready.Status == "True", ready.Reason
	} else {
		row.ReadyReason = "Unknown"
	}
	if cred := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterCredentialsValid); cred != nil {
		row.Credentials, row.CredentialsDetail = cred.Reason, cred.Message
	}
	if q, ok := c.Status.Allocatable[corev1.ResourceCPU]; ok {
		row.CPU = q.String()
	}
	if q, ok := c.Status.Allocatable[corev1.ResourceMemory]; ok {
		row.Memory = q.String()
	}
	for _, t := range c.Spec.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		row.Taints = append(row.Taints, s+":"+string(t.Effect))
	}
	for k, v := range c.Labels {
		if !strings.HasPrefix(k, "flotilla.dev/") {
			row.Labels = append(row.Labels, k+"="+v)
		}
	}
	sort.Strings(row.Labels)
	return row
}
