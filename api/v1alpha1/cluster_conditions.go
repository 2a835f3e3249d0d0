package v1alpha1

// The condition tree of a Cluster, written down once.
//
//	Ready  True     Probed      the spoke answers, credentials are valid
//	       Unknown  Unreachable the spoke does not answer (stopped, network, timeout)
//	       False    SecretNotFound | KubeconfigKeyMissing | KubeconfigInvalid
//	                            the credentials Secret is missing or unusable: fix the Secret
//	       False    Unauthorized | Forbidden
//	                            the spoke rejects the credentials: re-run `flotilla join`
//	       False    CertificateInvalid
//	                            the spoke's serving certificate does not match the kubeconfig's CA
//	       False    NotKubernetes
//	                            the server answers but is not a Kubernetes API server
//	       False    NotReady    the API server says it is not ready (/readyz)
//	       True     PullMode    mode Pull: the hub does not connect to the spoke, its agent
//	                            fetches the work; the hub cannot probe it (the Delivery
//	                            records' status says what the agent last reported)
//
//	CredentialsValid (for a kubeconfig whose token carries an expiry; `flotilla join` writes one)
//	       True     Valid        the token is valid; the message says until when and when the hub renews it
//	       True     Renewed      the hub renewed the token (a new one, bound to the same spoke Secret)
//	       True     ExpiringSoon less than a third of the token's lifetime is left and the hub cannot
//	                             renew it (the Secret was not written by join, or the token is not
//	                             bound to a spoke object): re-run `flotilla join` before it expires
//	       True     NoExpiry     the credentials carry no expiry Flotilla can read; it never renews them
//	       False    RenewFailed  renewal is due and failed (the message says why); the token still works
//	                             until the time in the message
//	       False    Expired      the token has expired: re-run `flotilla join`
//	The hub renews a token when less than a third of its lifetime is left: it requests a new
//	token for the same ServiceAccount, bound to the same spoke Secret and with the same
//	lifetime, through the TokenRequest API on the spoke, and writes it into the credentials
//	Secret, which reconnects to the spoke. The previous token stays valid until it expires.
//	The metric flotilla_cluster_credential_expiry_seconds{cluster} gives the seconds left.
const (
	// ClusterReady says whether Flotilla can work with the spoke now.
	ClusterReady = "Ready"
	// ClusterCredentialsValid says whether the spoke credentials will stay valid.
	ClusterCredentialsValid = "CredentialsValid"
)

// Reasons of the CredentialsValid condition of a Cluster.
const (
	ReasonCredentialsValid = "Valid"
	ReasonRenewed          = "Renewed"
	ReasonExpiringSoon     = "ExpiringSoon"
	ReasonNoExpiry         = "NoExpiry"
	ReasonRenewFailed      = "RenewFailed"
	ReasonExpired          = "Expired"
)

// Reasons of the Ready condition of a Cluster.
const (
	ReasonProbed               = "Probed"
	ReasonUnreachable          = "Unreachable"
	ReasonSecretNotFound       = "SecretNotFound"
	ReasonKubeconfigKeyMissing = "KubeconfigKeyMissing"
	ReasonKubeconfigInvalid    = "KubeconfigInvalid"
	ReasonUnauthorized         = "Unauthorized"
	ReasonForbidden            = "Forbidden"
	ReasonCertificateInvalid   = "CertificateInvalid"
	ReasonNotKubernetes        = "NotKubernetes"
	ReasonNotReady             = "NotReady"
	ReasonPullMode             = "PullMode"
)

// Labels and annotations Flotilla puts on hub objects.
const (
	// LabelClusterID on a Cluster holds the UID of the spoke's kube-system namespace, which
	// identifies the spoke API server: one spoke cannot be joined under two names.
	LabelClusterID = "flotilla.dev/cluster-id"
	// LabelCluster on a credentials Secret names the Cluster it belongs to. The hub renews
	// the token of such a Secret (one `flotilla join` wrote); it never writes other Secrets.
	LabelCluster = "flotilla.dev/cluster"
	// AnnotationSpokeGrant on a Cluster names the ClusterRole the spoke binds Flotilla's
	// ServiceAccount to (`flotilla join` records it). Deliveries that role forbids say so:
	// "forbidden by the spoke's grant (ClusterRole NAME)".
	AnnotationSpokeGrant = "flotilla.dev/spoke-grant"
)
