package render

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// allocated lists, by kind, what the hub's API server allocates for an object when it stores
// it: addresses and ports from the hub's own ranges, selectors and labels holding the hub
// object's UID, counters of the hub object's history. Such values mean something on the hub
// only, so they are never delivered. A spoke would reject them (a ClusterIP outside its service
// range, a Job selector naming another UID) or collide with its own allocations; left out, the
// spoke's API server allocates its own on create and keeps them on every later apply.
//
// Only the hub API server's doing is listed. The hub runs no workload controllers (its
// kube-controller-manager runs the garbage-collector and namespace controllers only), so what
// controllers fill in — a PersistentVolumeClaim's spec.volumeName, a Pod's spec.nodeName, a
// token Secret's data — is never set on the hub and is delivered as the user wrote it. Values
// the API server derives from what the spoke has too (a Job's job-name label, a Namespace's
// kubernetes.io/metadata.name label) are the same on both and are kept.
//
// A stored object cannot tell a value its user chose from one the API server chose, so a hub
// Service that asked for nodePort 30080 loses it too; pin such values per cluster with an
// override, or deliver the object as a manifest: manifest documents were never stored on the
// hub, so these rules leave them alone.
var allocated = map[schema.GroupKind]func(obj map[string]any){
	{Group: "", Kind: "Service"}:       dropServiceAllocations,
	{Group: "batch", Kind: "Job"}:      dropGeneratedJobSelector,
	{Group: "apps", Kind: "DaemonSet"}: dropTemplateGeneration,
}

// dropAllocated removes from obj, a private copy of a hub object, what the hub's API server
// allocated for it. An object without a UID was never stored on the hub (a manifest document,
// or an object already rendered) and is left as it is.
func dropAllocated(obj *unstructured.Unstructured) {
	if obj.GetUID() == "" {
		return
	}
	if drop, ok := allocated[obj.GroupVersionKind().GroupKind()]; ok {
		drop(obj.Object)
	}
}

// dropServiceAllocations removes a Service's spec.clusterIP and spec.clusterIPs, unless they
// are "None" (a headless Service must stay headless), every spec.ports[*].nodePort and
// spec.healthCheckNodePort. ipFamilies and ipFamilyPolicy are kept: they are usually the
// user's, and the spoke rejects only a family it does not serve.
func dropServiceAllocations(obj map[string]any) {
	ip, _, _ := unstructured.NestedString(obj, "spec", "clusterIP")
	ips, _, _ := unstructured.NestedStringSlice(obj, "spec", "clusterIPs")
	if ip != corev1.ClusterIPNone && (len(ips) == 0 || ips[0] != corev1.ClusterIPNone) {
		unstructured.RemoveNestedField(obj, "spec", "clusterIP")
		unstructured.RemoveNestedField(obj, "spec", "clusterIPs")
	}
	unstructured.RemoveNestedField(obj, "spec", "healthCheckNodePort")
	ports, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "ports")
	list, _ := ports.([]any)
	for _, p := range list {
		if port, ok := p.(map[string]any); ok {
			delete(port, "nodePort")
		}
	}
}

// jobUIDLabels are the labels a Job's API server sets to the Job's UID.
var jobUIDLabels = []string{"controller-uid", batchv1.ControllerUidLabel}

// dropGeneratedJobSelector removes what a Job's API server generates when spec.manualSelector
// is not true (generateSelector, run by PrepareForCreate in k8s.io/kubernetes
// pkg/registry/batch/job): spec.selector, which matches the hub Job's UID, and the
// controller-uid and batch.kubernetes.io/controller-uid labels holding that UID, on the pod
// template and on the Job itself (defaulting gives a Job without labels its template's labels,
// the same map, before the generated labels are added to it). Delivered, they make the spoke
// reject the Job ("`selector` not auto-generated"): it validates them against its own Job's
// UID. The spoke's API server generates its own on create.
//
// The job-name and batch.kubernetes.io/job-name labels are kept: the API server sets them to
// metadata.name and validates them against it, the name is the same on the spoke (overrides
// may not rename), so the hub's values are exactly those the spoke would set, and a user may
// have written them.
//
// With manualSelector: true the API server generates nothing; selector and labels are the
// user's and are kept.
func dropGeneratedJobSelector(obj map[string]any) {
	if manual, _, _ := unstructured.NestedBool(obj, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(obj, "spec", "selector")
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
		labels, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
		m, ok := labels.(map[string]any)
		if !ok {
			continue
		}
		for _, l := range jobUIDLabels {
			delete(m, l)
		}
		if len(m) == 0 {
			unstructured.RemoveNestedField(obj, path...)
		}
	}
}

// dropTemplateGeneration removes the deprecated.daemonset.template.generation annotation, in
// which the hub's API server counts the hub DaemonSet's template changes. The spoke's API
// server keeps its own count and ignores a delivered one on update, so the hub's count would
// only make the delivered object disagree with what the spoke stores.
func dropTemplateGeneration(obj map[string]any) {
	unstructured.RemoveNestedField(obj, "metadata", "annotations", appsv1.DeprecatedTemplateGeneration)
}
