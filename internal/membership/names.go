package membership

// Names of what joining creates.
const (
	// Namespace is where Flotilla keeps its ServiceAccount on spokes and credentials on the hub.
	Namespace = "flotilla-system"
	// ServiceAccount is the identity Flotilla uses on a spoke.
	ServiceAccount = "flotilla"
	// ClusterRoleBinding binds ServiceAccount to cluster-admin on a spoke.
	ClusterRoleBinding = "flotilla"
	// selfRemoval names the Role and RoleBinding that let ServiceAccount delete itself after
	// ClusterRoleBinding is gone, so `flotilla unjoin` works with Flotilla's own credentials.
	selfRemoval = "flotilla-self-removal"
	// kubeconfigKey is the key of the kubeconfig in a credentials Secret.
	kubeconfigKey = "kubeconfig"
	// fieldManager owns what joining applies, on the hub and on spokes.
	fieldManager = "flotilla"
	// tokenLifetime is how long an issued spoke token is valid; joining again renews it.
	tokenLifetime = 365 * 24 * 3600
)

// SecretName returns the name of the hub Secret that holds a Cluster's kubeconfig.
func SecretName(cluster string) string { return cluster + "-kubeconfig" }
