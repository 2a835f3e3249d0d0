package ledger

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// maxMessage bounds status.message.
const maxMessage = 512

// StatusOf is a record's status after a delivery's latest result: prev is the status recorded
// before, which keeps the last complete revision while a newer one is in flight. objs are the
// objects the delivery wants on the cluster. It is pure.
func StatusOf(prev flotillav1.DeliveryStatus, res deliver.Result, objs []*unstructured.Unstructured) flotillav1.DeliveryStatus {
	out := flotillav1.DeliveryStatus{
		Revision: prev.Revision,
		Objects:  groupObjects(objs),
		Count:    int32(len(objs)),
		Applied:  int32(res.Applied), Ready: int32(res.Ready), Failed: int32(res.Failed),
		Drifted: int32(res.Drifted), Fighting: int32(res.Fighting),
		Message: limit(res.Message, maxMessage),
	}
	if res.Complete {
		out.Revision = res.Revision
	}
	if out.Message == "" && res.PruneBlocked != "" {
		out.Message = limit(res.PruneBlocked, maxMessage)
	}
	return out
}

// groupObjects lists objects by kind and namespace, sorted.
func groupObjects(objs []*unstructured.Unstructured) []flotillav1.DeliveredObjects {
	type group struct{ kind, namespace string }
	byGroup := map[group][]string{}
	for _, o := range objs {
		g := group{render.KindString(o.GroupVersionKind()), o.GetNamespace()}
		byGroup[g] = append(byGroup[g], o.GetName())
	}
	out := make([]flotillav1.DeliveredObjects, 0, len(byGroup))
	for g, names := range byGroup {
		sort.Strings(names)
		out = append(out, flotillav1.DeliveredObjects{Kind: g.kind, Namespace: g.namespace, Names: names})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Namespace < out[j].Namespace
	})
	return out
}

// limit cuts s to n characters, marking the cut.
func limit(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
