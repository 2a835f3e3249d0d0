package dashboard

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// ownerSummary is one owner on the owners page.
type ownerSummary struct {
	Owner                                   ownerRef
	Clusters, Ready, Failed, Drifted, Total int
}

type ownersPage struct {
	Owners []ownerSummary
	Pager  pager
}

func (s *server) owners(v viewer, r *http.Request) (string, any, error) {
	byOwner := map[ownerRef]*ownerSummary{}
	for _, d := range s.records(r.Context(), v, nil) {
		o := refOf(d)
		sum := byOwner[o]
		if sum == nil {
			sum = &ownerSummary{Owner: o}
			byOwner[o] = sum
		}
		sum.Clusters++
		sum.Total += int(d.Status.Count)
		switch recordState(d) {
		case stateReady:
			sum.Ready++
		case stateFailed, stateConflict:
			sum.Failed++
		case stateDrifted:
			sum.Drifted++
		}
	}
	page := ownersPage{}
	for _, sum := range byOwner {
		page.Owners = append(page.Owners, *sum)
	}
	sort.Slice(page.Owners, func(i, j int) bool { return page.Owners[i].Owner.String() < page.Owners[j].Owner.String() })
	page.Owners, page.Pager = paginate(r, page.Owners)
	return "owners", page, nil
}

// clusterColumn is what an owner runs on one cluster.
type clusterColumn struct {
	Cluster                                string
	State, Revision, Work, Message         string
	Count, Applied, Ready, Failed, Drifted int32
	Replicas                               []string
	Placement                              placementLink
}

type eventRow struct {
	Type, Reason, Message, Age string
	Count                      int32
}

type ownerPage struct {
	Owner      ownerRef
	Matrix     matrix
	Columns    []clusterColumn // the clusters the matrix shows
	Conditions []metav1.Condition
	Rollout    *rolloutView
	Events     []eventRow
	Found      bool
}

func (s *server) owner(v viewer, r *http.Request) (string, any, error) {
	ctx := r.Context()
	ns := r.PathValue("namespace")
	if ns == "-" {
		ns = ""
	}
	want := ownerRef{Kind: r.PathValue("kind"), Namespace: ns, Name: r.PathValue("name")}
	recs := s.records(ctx, v, func(d *flotillav1.Delivery) bool {
		o := refOf(d)
		return o.Kind == want.Kind && o.Namespace == want.Namespace && o.Name == want.Name
	})
	page := ownerPage{Owner: want}
	if len(recs) > 0 {
		page.Owner = refOf(recs[0])
	}
	st := s.ownerStatus(ctx, page.Owner)
	if st.Found && v.mayRead(page.Owner) {
		page.Found, page.Conditions = true, st.Conditions
		page.Rollout = rolloutOf(v, page.Owner, st, page.Owner.Path())
	}
	page.Found = page.Found || len(recs) > 0
	var cols []int
	page.Matrix, cols = buildMatrix(r, page.Owner, recs, st)
	index := s.placementIndex(ctx, v)
	for _, i := range cols {
		d := recs[i]
		col := clusterColumn{
			Cluster: d.Spec.Cluster, State: recordState(d), Revision: short(d.Status.Revision), Message: d.Status.Message,
			Count: d.Status.Count, Applied: d.Status.Applied, Ready: d.Status.Ready, Failed: d.Status.Failed, Drifted: d.Status.Drifted,
			Placement: index.of(d),
		}
		if d.Spec.Work != nil {
			col.Work = d.Spec.Work.Revision
		}
		for _, rep := range d.Spec.Replicas {
			col.Replicas = append(col.Replicas, rep.Object+": "+strconv.Itoa(int(rep.Replicas)))
		}
		page.Columns = append(page.Columns, col)
	}
	page.Events = s.eventsOf(r, v, page.Owner)
	return "owner", page, nil
}

// eventsOf returns the newest Events about an owner, where the viewer may list Events.
func (s *server) eventsOf(r *http.Request, v viewer, o ownerRef) []eventRow {
	ns := o.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	if !v.canList("events", ns) {
		return nil
	}
	var list corev1.EventList
	if err := s.store.list(r.Context(), "events", &list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var evs []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == o.Kind && e.InvolvedObject.Name == o.Name {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool { return lastSeen(evs[i]).After(lastSeen(evs[j]).Time) })
	var out []eventRow
	for i, e := range evs {
		if i == 20 {
			break
		}
		out = append(out, eventRow{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count, Age: lastSeen(e).UTC().Format("15:04:05")})
	}
	return out
}

func lastSeen(e corev1.Event) metav1.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp
	}
	if !e.EventTime.IsZero() {
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.CreationTimestamp
}

// diffPath is the diff page of an owner's objects on a cluster, for states a diff explains.
func diffPath(o ownerRef, cluster, state string) string {
	switch state {
	case stateDrifted, stateFailed, stateConflict:
		return o.Path() + "/diff/" + url.PathEscape(cluster)
	}
	return ""
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func keyOf(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: strings.TrimSpace(namespace), Name: name}
}
