package membership

import "time"

// Names of what joining creates.
const (
	// Namespace is where Flotilla keeps its ServiceAccount on spokes and credentials on the hub.
	Namespace = "flotilla-system"
	// ServiceAccount is the identity Flotilla uses on a spoke.
	ServiceAccount = "flotilla"
	// ClusterRoleBinding binds ServiceAccount to its grant on a spoke: DeliveryClusterRole, or
	// the ClusterRole the spoke's admin named with JoinOptions.Role.
	ClusterRoleBinding = "flotilla"
	// DeliveryClusterRole is the ClusterRole join creates and binds when no other is named (see
	// deliveryRules).
	DeliveryClusterRole = "flotilla-delivery"
	// selfAccess names the Role and RoleBinding that let ServiceAccount request tokens for
	// itself (the hub renews its token) and delete itself (`flotilla unjoin` with Flotilla's
	// own credentials), whatever its grant.
	selfAccess = "flotilla-self"
	// tokenSecretPrefix starts the name of each Secret a token is bound to; the API server
	// adds a unique suffix, one per join.
	tokenSecretPrefix = "flotilla-token-"
	// kubeconfigKey is the key of the kubeconfig in a credentials Secret.
	kubeconfigKey = "kubeconfig"
	// fieldManager owns what joining applies on the hub.
	fieldManager = "flotilla"
	// spokeFieldManager owns what joining applies on spokes, apart from what Flotilla delivers.
	spokeFieldManager = "flotilla-join"
)

// Labels join puts on spoke objects.
const (
	// LabelHub marks every object join creates on a spoke with the UID of the hub's
	// kube-system namespace. Join and unjoin change or delete only objects that carry their
	// own hub's value: a same-named object someone else made is never taken over or removed.
	LabelHub = "flotilla.dev/hub"
	// labelTokenOf marks the Secrets that ServiceAccount's tokens are bound to.
	labelTokenOf = "flotilla.dev/token-of"
)

// Token lifetimes. The API server refuses less than ten minutes; the hub renews a token when a
// third of its lifetime is left, so the lifetime is also how long the hub may be away before a
// spoke's credentials lapse (a third of it) and how long a stolen token stays usable.
const (
	DefaultTokenLifetime = 24 * time.Hour
	MinTokenLifetime     = 10 * time.Minute
	MaxTokenLifetime     = 7 * 24 * time.Hour
)

// SecretName returns the name of the hub Secret that holds a Cluster's kubeconfig.
func SecretName(cluster string) string { return cluster + "-kubeconfig" }

// The per-namespace identities. A namespaced owner's deliveries are made on a spoke as the
// identity of its namespace, which a RoleBinding in that namespace alone grants anything: the
// spoke itself then refuses that owner's writes outside its namespace. The identity is a
// ServiceAccount name in Namespace that no ServiceAccount object need carry; Flotilla
// impersonates it (selfAccessRules allow impersonating ServiceAccounts of Namespace, and no
// others), so no token for it exists and a user of the tenant's namespace on the spoke cannot
// act as it.
const (
	// NamespaceRoleBinding is the RoleBinding, in each namespace Flotilla delivers to for a
	// namespaced owner, that grants the namespace's identity the spoke's grant there.
	NamespaceRoleBinding = "flotilla-namespace"
	// NamespaceClusterRole is the ClusterRole NamespaceRoleBinding refers to on a spoke that
	// was not joined (an imported cluster, whose credentials are the source's own); on a
	// joined spoke it refers to the grant's ClusterRole.
	NamespaceClusterRole    = "flotilla-namespace"
	namespaceIdentityPrefix = "flotilla-ns-"
)

// NamespaceIdentityLabels mark what Flotilla writes for the namespace identities (they are not
// delivered objects: they carry no owner, and are never pruned); unjoin removes the
// RoleBindings so marked.
var NamespaceIdentityLabels = map[string]string{"app.kubernetes.io/managed-by": "flotilla"}

// NamespaceServiceAccount is the name, in Namespace, of the identity Flotilla acts as for
// namespace ns (a namespace name is at most 63 characters, so the name is valid).
func NamespaceServiceAccount(ns string) string { return namespaceIdentityPrefix + ns }

// NamespaceUser is the user name of NamespaceServiceAccount(ns), as the spoke authenticates it.
func NamespaceUser(ns string) string {
	return "system:serviceaccount:" + Namespace + ":" + NamespaceServiceAccount(ns)
}
