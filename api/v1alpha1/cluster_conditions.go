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
const (
	// ClusterReady says whether Flotilla can work with the spoke now.
	ClusterReady = "Ready"
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
)

// Labels and annotations Flotilla puts on hub objects.
const (
	// LabelClusterID on a Cluster holds the UID of the spoke's kube-system namespace, which
	// identifies the spoke API server: one spoke cannot be joined under two names.
	LabelClusterID = "flotilla.dev/cluster-id"
	// LabelCluster on a credentials Secret names the Cluster it belongs to.
	LabelCluster = "flotilla.dev/cluster"
)
