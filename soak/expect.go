package main

import (
	"fmt"
	"maps"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// hubState is what the hub says, read from the hub at the end of a run.
type hubState struct {
	Clusters     []flotillav1.Cluster
	Placements   []flotillav1.Placement
	Propagations []flotillav1.Propagation
	ConfigMaps   []corev1.ConfigMap
	Deployments  []appsv1.Deployment
}

// spokeState is what one spoke holds of Flotilla's: the objects in the soak's namespace that
// carry Flotilla's owner label.
type spokeState struct {
	ConfigMaps  []corev1.ConfigMap
	Deployments []appsv1.Deployment
	// Instances are the SoakApp instances on the spoke; AppConfigMaps and AppDeployments
	// Flotilla's objects in their namespace.
	Instances      []unstructured.Unstructured
	AppConfigMaps  []corev1.ConfigMap
	AppDeployments []appsv1.Deployment
}

// difference is one way a spoke differs from what the hub says.
type difference struct {
	Cluster string `json:"cluster"`
	Object  objKey `json:"object"`
	Field   string `json:"field"`
	Want    string `json:"want"`
	Got     string `json:"got"`
}

func (d difference) String() string {
	return fmt.Sprintf("%s: %s %s: want %s, got %s", d.Cluster, d.Object, d.Field, d.Want, d.Got)
}

// wantCM is a ConfigMap a cluster should hold.
type wantCM struct {
	Labels map[string]string
	Data   map[string]string
}

// wantDep is a transparent-mode Deployment a cluster should hold: its template's image, and
// its share of the replicas (a range when divided: floor or ceiling of an even split).
type wantDep struct {
	Image          string
	MinRep, MaxRep int32
	Total          int32
	Divided        bool
}

// expected computes, per cluster, the objects the hub wants there: the ConfigMaps each live
// Propagation selects, and each transparent-mode Deployment, on the clusters their Placement's
// cluster selector chooses. A Placement with Weighted replicas divides a Deployment's
// replicas over its clusters evenly (the soak gives no cluster a weight), so each holds the
// floor or the ceiling of total/clusters; Duplicate (or no replicas policy) gives each the total.
func expected(h hubState) (map[string]map[objKey]wantCM, map[string]map[objKey]wantDep, error) {
	chosen := map[string][]string{}
	divides := map[string]bool{}
	for _, pl := range h.Placements {
		sel, err := metav1.LabelSelectorAsSelector(pl.Spec.ClusterSelector)
		if err != nil {
			return nil, nil, fmt.Errorf("placement %s: %w", pl.Name, err)
		}
		for _, c := range h.Clusters {
			if (len(pl.Spec.ClusterNames) == 0 || contains(pl.Spec.ClusterNames, c.Name)) && sel.Matches(labels.Set(c.Labels)) {
				chosen[pl.Name] = append(chosen[pl.Name], c.Name)
			}
		}
		divides[pl.Name] = pl.Spec.Replicas != nil && pl.Spec.Replicas.Mode == flotillav1.ReplicaModeWeighted
	}
	cms := map[string]map[objKey]wantCM{}
	deps := map[string]map[objKey]wantDep{}
	for _, c := range h.Clusters {
		cms[c.Name], deps[c.Name] = map[objKey]wantCM{}, map[objKey]wantDep{}
	}
	for _, p := range h.Propagations {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, rs := range p.Spec.ResourceSelectors {
			if rs.Kind != "ConfigMap" {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(rs.LabelSelector)
			if err != nil {
				return nil, nil, fmt.Errorf("propagation %s: %w", p.Name, err)
			}
			for _, cm := range h.ConfigMaps {
				if cm.DeletionTimestamp != nil || cm.Namespace != p.Namespace || !sel.Matches(labels.Set(cm.Labels)) {
					continue
				}
				for _, cluster := range chosen[p.Spec.PlacementRef.Name] {
					cms[cluster][cmKey(cm.Name)] = wantCM{Labels: cm.Labels, Data: cm.Data}
				}
			}
		}
	}
	for _, d := range h.Deployments {
		pl, ok := d.Labels[flotillav1.LabelPlacement]
		if !ok || d.DeletionTimestamp != nil {
			continue
		}
		clusters := chosen[pl]
		total := int32(1)
		if d.Spec.Replicas != nil {
			total = *d.Spec.Replicas
		}
		w := wantDep{Image: d.Spec.Template.Spec.Containers[0].Image, MinRep: total, MaxRep: total, Total: total}
		if divides[pl] && len(clusters) > 0 {
			n := int32(len(clusters))
			w.MinRep, w.MaxRep, w.Divided = total/n, (total+n-1)/n, true
		}
		for _, cluster := range clusters {
			deps[cluster][depKey(d.Name)] = w
		}
	}
	return cms, deps, nil
}

// diff compares each spoke with what the hub wants there, object by object: missing and
// unexpected objects, ConfigMap data and the hub's labels, a Deployment's image and replicas,
// and, for a divided Deployment, that its shares add up to its total.
func diff(h hubState, spokes map[string]spokeState) ([]difference, error) {
	d, _, err := diffCounted(h, spokes)
	return d, err
}

// diffCounted is diff that also counts the objects wanted, over all clusters: how much the
// comparison looked at.
func diffCounted(h hubState, spokes map[string]spokeState) ([]difference, int, error) {
	wantCMs, wantDeps, err := expected(h)
	if err != nil {
		return nil, 0, err
	}
	var out []difference
	wantedObjects := 0
	for _, c := range wantCMs {
		wantedObjects += len(c)
	}
	for _, c := range wantDeps {
		wantedObjects += len(c)
	}
	totals := map[objKey]int32{}
	divided := map[objKey]wantDep{}
	for _, cluster := range sortedKeys(wantCMs) {
		got := spokes[cluster]
		have := map[objKey]corev1.ConfigMap{}
		for _, cm := range got.ConfigMaps {
			have[cmKey(cm.Name)] = cm
		}
		for _, k := range sortedKeys(wantCMs[cluster]) {
			w := wantCMs[cluster][k]
			cm, ok := have[k]
			if !ok {
				out = append(out, difference{cluster, k, "object", "present", "missing"})
				continue
			}
			if !maps.Equal(w.Data, cm.Data) {
				out = append(out, difference{cluster, k, "data", fmt.Sprint(w.Data), fmt.Sprint(cm.Data)})
			}
			for _, l := range sortedKeys(w.Labels) {
				if cm.Labels[l] != w.Labels[l] {
					out = append(out, difference{cluster, k, "metadata.labels." + l, w.Labels[l], cm.Labels[l]})
				}
			}
		}
		for _, k := range sortedKeys(have) {
			if _, ok := wantCMs[cluster][k]; !ok {
				out = append(out, difference{cluster, k, "object", "absent (the hub does not want it here)", "present"})
			}
		}
		haveDeps := map[objKey]appsv1.Deployment{}
		for _, d := range got.Deployments {
			haveDeps[depKey(d.Name)] = d
		}
		for _, k := range sortedKeys(wantDeps[cluster]) {
			w := wantDeps[cluster][k]
			d, ok := haveDeps[k]
			if !ok {
				out = append(out, difference{cluster, k, "object", "present", "missing"})
				continue
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != w.Image {
				out = append(out, difference{cluster, k, "spec.template.spec.containers[0].image", w.Image, img})
			}
			rep := int32(1)
			if d.Spec.Replicas != nil {
				rep = *d.Spec.Replicas
			}
			if rep < w.MinRep || rep > w.MaxRep {
				out = append(out, difference{cluster, k, "spec.replicas", fmt.Sprintf("%d..%d of %d", w.MinRep, w.MaxRep, w.Total), fmt.Sprint(rep)})
			}
			if w.Divided {
				totals[k] += rep
				divided[k] = w
			}
		}
		for _, k := range sortedKeys(haveDeps) {
			if _, ok := wantDeps[cluster][k]; !ok {
				out = append(out, difference{cluster, k, "object", "absent (the hub does not want it here)", "present"})
			}
		}
	}
	for _, cluster := range sortedKeys(spokes) {
		out = append(out, instanceDiff(cluster, spokes[cluster])...)
		for _, inst := range spokes[cluster].Instances {
			if inst.GetDeletionTimestamp() == nil {
				wantedObjects += instanceChildren
			}
		}
	}
	for _, k := range sortedKeys(divided) {
		if totals[k] != divided[k].Total {
			out = append(out, difference{"(all clusters)", k, "sum of spec.replicas", fmt.Sprint(divided[k].Total), fmt.Sprint(totals[k])})
		}
	}
	return out, wantedObjects, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
