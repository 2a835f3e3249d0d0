package sources

import (
	"fmt"
	"strings"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Origin says, in a user's words, which object an imported Cluster came from, given its
// flotilla.dev/source label and flotilla.dev/source-ref annotation (<namespace>/<name>).
func Origin(source, ref string) string {
	switch source {
	case flotillav1.SourceKubeconfigSecret:
		return fmt.Sprintf("the kubeconfig Secret %s (label %s=true)", ref, KubeconfigSecretLabel)
	case flotillav1.SourceClusterAPI:
		return "the Cluster API cluster " + ref
	case flotillav1.SourceClusterProfile:
		return "the ClusterProfile " + ref
	case flotillav1.SourceArgoCD:
		return fmt.Sprintf("the Argo CD cluster Secret %s (label %s=cluster)", ref, ArgoCDSecretTypeLabel)
	}
	return fmt.Sprintf("%s %s", source, ref)
}

// Removal says how to take an imported Cluster out of the fleet at its source: the importer
// deletes the Cluster (and its credentials copy) once the source stops naming it, and
// re-creates a Cluster deleted on the hub while the source still names it. Nothing on the
// spoke is deleted either way.
func Removal(source, ref string) string {
	ns, name, _ := strings.Cut(ref, "/")
	switch source {
	case flotillav1.SourceKubeconfigSecret:
		return fmt.Sprintf("delete the Secret (kubectl -n %s delete secret %s) or take its label off (kubectl -n %s label secret %s %s-)",
			ns, name, ns, name, KubeconfigSecretLabel)
	case flotillav1.SourceClusterAPI:
		return fmt.Sprintf("deleting the Cluster API cluster (kubectl -n %s delete clusters.cluster.x-k8s.io %s) deletes the cluster itself; "+
			"to keep it and leave the fleet, take the namespace %s off the hub's --cluster-api-namespace (or run it with --import-cluster-api=false)",
			ns, name, ns)
	case flotillav1.SourceClusterProfile:
		return fmt.Sprintf("delete the credentials Secret its cluster manager wrote for the consumer (labelled %s=%s, %s=%s, in a namespace labelled %s), "+
			"or have the cluster manager delete the ClusterProfile", LabelClusterProfile, name, LabelClusterProfileNamespace, ns, LabelInventoryConsumer)
	case flotillav1.SourceArgoCD:
		return fmt.Sprintf("delete the Secret (kubectl -n %s delete secret %s, or `argocd cluster rm`) or take its label off (kubectl -n %s label secret %s %s-); "+
			"either removes the cluster from Argo CD too", ns, name, ns, name, ArgoCDSecretTypeLabel)
	}
	return "remove it where it was registered"
}
