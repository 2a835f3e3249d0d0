package v1alpha1

// Labels and annotations of Clusters that an importer (internal/sources) made from a cluster
// registered elsewhere: a kubeconfig Secret, a Cluster API Cluster, a ClusterProfile, an Argo
// CD cluster Secret. A Cluster without LabelSource was joined with `flotilla join` or created
// by hand; importers never touch it.
const (
	// LabelSource on a Cluster names the importer that maintains it: one of the Source* values.
	LabelSource = "flotilla.dev/source"
	// AnnotationSourceRef on an imported Cluster names the object it was imported from, as
	// <namespace>/<name> of that source's kind.
	AnnotationSourceRef = "flotilla.dev/source-ref"
)

// Values of LabelSource.
const (
	SourceKubeconfigSecret = "kubeconfig-secret"
	SourceClusterAPI       = "cluster-api"
	SourceClusterProfile   = "cluster-profile"
	SourceArgoCD           = "argocd"
)
