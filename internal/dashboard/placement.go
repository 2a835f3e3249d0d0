package dashboard

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
)

type placementRow struct {
	Link     placementLink
	Selects  string
	Selected int32
	Clusters []string
}

type placementsPage struct {
	Placements []placementRow
}

func (s *server) placements(v viewer, r *http.Request) (string, any, error) {
	var list flotillav1.PlacementList
	if err := s.store.list(r.Context(), "placements", &list); err != nil {
		return "", nil, err
	}
	page := placementsPage{}
	for _, p := range list.Items {
		if !v.canList("placements", p.Namespace) {
			continue
		}
		row := placementRow{Link: placementLink{Namespace: p.Namespace, Name: p.Name}, Selects: selects(&p), Selected: p.Status.SelectedClusters}
		for _, d := range p.Status.Decisions {
			row.Clusters = append(row.Clusters, d.ClusterName)
		}
		page.Placements = append(page.Placements, row)
	}
	sort.Slice(page.Placements, func(i, j int) bool { return page.Placements[i].Link.Path() < page.Placements[j].Link.Path() })
	return "placements", page, nil
}

// selects says in a few words which clusters a Placement chooses from.
func selects(p *flotillav1.Placement) string {
	var parts []string
	if len(p.Spec.ClusterNames) > 0 {
		parts = append(parts, "clusters "+strings.Join(p.Spec.ClusterNames, ", "))
	}
	if p.Spec.ClusterSelector != nil {
		parts = append(parts, "labels "+metav1.FormatLabelSelector(p.Spec.ClusterSelector))
	}
	if p.Spec.ClusterCount != nil {
		parts = append(parts, "at most "+strconv.Itoa(int(*p.Spec.ClusterCount))+" clusters")
	}
	if len(parts) == 0 {
		return "every cluster"
	}
	return strings.Join(parts, "; ")
}

// decisionRow is one chosen cluster, with what the Placement's owners run there.
type decisionRow struct {
	Cluster, Tier, State, Since, Message, Replaces string
	Delivery                                       string // the owners' records' state there
	Owners                                         []ownerRef
	Replicas                                       []string // the division: workload share there
}

type placementPage struct {
	Link       placementLink
	Found      bool
	Selects    string
	Conditions []metav1.Condition
	Decisions  []decisionRow
	Policy     *rolloutPolicy // spec.rollout
	Rollouts   []*rolloutView // its owners' rollouts that the viewer may read
}

func (s *server) placement(v viewer, r *http.Request) (string, any, error) {
	ctx := r.Context()
	link := placementLink{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	page := placementPage{Link: link}
	p := &flotillav1.Placement{}
	if !v.canList("placements", link.Namespace) || !s.store.cached["placements"] || s.store.reader.Get(ctx, keyOf(link.Namespace, link.Name), p) != nil {
		return "placement", page, nil
	}
	page.Found, page.Selects, page.Conditions = true, selects(p), p.Status.Conditions
	label := ledger.PlacementLabelValue(keyOf(link.Namespace, link.Name))
	recs := s.records(ctx, v, func(d *flotillav1.Delivery) bool { return d.Labels[ledger.LabelPlacementRef] == label })
	page.Policy = policyOf(p.Spec.Rollout)
	page.Rollouts = s.rolloutsOf(v, r, recs, link.Path())
	for _, d := range p.Status.Decisions {
		row := decisionRow{Cluster: d.ClusterName, Tier: d.Tier, State: string(d.State), Message: d.Message, Replaces: d.Replaces}
		if row.State == "" {
			row.State = string(flotillav1.DecisionActive)
		}
		if d.Since != nil {
			row.Since = d.Since.UTC().Format("2006-01-02 15:04:05")
		}
		worst := ""
		for _, rec := range recs {
			if rec.Spec.Cluster != d.ClusterName {
				continue
			}
			row.Owners = append(row.Owners, refOf(rec))
			worst = worse(worst, recordState(rec))
			for _, rep := range rec.Spec.Replicas {
				row.Replicas = append(row.Replicas, rep.Object+": "+strconv.Itoa(int(rep.Replicas)))
			}
		}
		row.Delivery = worst
		page.Decisions = append(page.Decisions, row)
	}
	return "placement", page, nil
}

// worse returns the state that needs more attention.
func worse(a, b string) string {
	rank := map[string]int{"": 0, stateReady: 1, stateApplied: 2, statePending: 3, stateHeld: 4, stateDrifted: 5, stateConflict: 6, stateFailed: 7}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// rolloutsOf are the rollouts of the records' owners that the viewer may read, in order.
func (s *server) rolloutsOf(v viewer, r *http.Request, recs []*flotillav1.Delivery, back string) []*rolloutView {
	var out []*rolloutView
	seen := map[ownerRef]bool{}
	for _, d := range recs {
		o := refOf(d)
		if seen[o] {
			continue
		}
		seen[o] = true
		st := s.ownerStatus(r.Context(), o)
		if st.Rollout == nil || !v.mayRead(o) {
			continue
		}
		out = append(out, rolloutOf(v, o, st, back))
	}
	return out
}
