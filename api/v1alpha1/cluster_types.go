package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterSpec is how Flotilla reaches a spoke cluster and whether it may place work there.
// +kubebuilder:validation:XValidation:rule="self.mode == 'Pull' || has(self.credentials)",message="credentials are required unless mode is Pull"
type ClusterSpec struct {
	// mode is how the cluster gets its work. Push (the default): the hub connects to the spoke
	// with credentials and delivers. Pull: the hub never connects to the spoke and holds no
	// credentials for it; an agent on the spoke (`flotilla agent`) fetches the cluster's work
	// from the hub's work endpoint, delivers it there with the same engine, and reports the
	// results into the cluster's Delivery records. A pull cluster is Ready with reason
	// PullMode: the hub cannot probe it.
	// +optional
	// +kubebuilder:default=Push
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="mode cannot change: unjoin the cluster (flotilla unjoin) and join it again in the other mode"
	Mode ClusterMode `json:"mode,omitempty"`

	// credentials points at the Secret on the hub that holds a kubeconfig for the spoke.
	// `flotilla join` creates it with a token of a dedicated ServiceAccount on the spoke.
	// Changing the Secret's content re-connects to the spoke without a controller restart;
	// deleting it disconnects Flotilla but leaves everything on the spoke in place. Required
	// in mode Push; unused in mode Pull.
	// +optional
	Credentials KubeconfigSecretRef `json:"credentials,omitzero"`

	// taints keep placements that do not tolerate them off this cluster.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MaxItems=32
	Taints []ClusterTaint `json:"taints,omitempty"`

	// unschedulable cordons the cluster: it takes no new placements, and what runs there stays.
	// +optional
	Unschedulable bool `json:"unschedulable,omitempty"`

	// placementLimits bound what Flotilla places on the cluster: the cpu, memory and pods that
	// the replicas of every owner's workloads here request together (replicas times the pod
	// template's requests; each replica counts one pod). A divided workload takes no more
	// replicas than the limits admit next to what the others placed; the rest goes to other
	// clusters (or stays unplaced, with a LimitsExceeded Event on the owner). Duplicated
	// workloads count toward status.placed but are not held back, and pods Flotilla did not
	// place are not counted. Lowering a limit moves the excess away, make before break.
	// Unset: no limit.
	// +optional
	PlacementLimits corev1.ResourceList `json:"placementLimits,omitempty"`
}

// KubeconfigSecretRef names a key of a Secret on the hub that holds a kubeconfig.
type KubeconfigSecretRef struct {
	// namespace of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key in the Secret's data that holds the kubeconfig.
	// +optional
	// +kubebuilder:default=kubeconfig
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// TaintEffect is what a taint does to placements that do not tolerate it.
// +kubebuilder:validation:Enum=NoSchedule;NoExecute
type TaintEffect string

const (
	// TaintEffectNoSchedule keeps new placements off the cluster; what runs there stays.
	TaintEffectNoSchedule TaintEffect = "NoSchedule"
	// TaintEffectNoExecute also moves away what already runs there.
	TaintEffectNoExecute TaintEffect = "NoExecute"
)

// ClusterTaint marks a cluster so that only placements tolerating it select the cluster.
type ClusterTaint struct {
	// key of the taint, a qualified name such as example.com/maintenance.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	Key string `json:"key"`

	// value of the taint.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value,omitempty"`

	// effect of the taint: NoSchedule or NoExecute.
	// +required
	Effect TaintEffect `json:"effect"`
}

// ClusterStatus is what Flotilla last observed of the spoke. It is written only when something
// changes, never on a timer: in a steady fleet Flotilla makes no writes to the hub.
type ClusterStatus struct {
	// conditions: Ready is True when the spoke answers health probes with valid credentials,
	// False when it answers but something is wrong (the reason says what to fix), and Unknown
	// when it cannot be reached. CredentialsValid says until when the credentials' token is
	// valid and whether the hub renews it (reasons Valid, Renewed, ExpiringSoon, NoExpiry,
	// RenewFailed, Expired).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// kubernetesVersion is the spoke API server's version, e.g. v1.36.3.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// nodeCount is the number of Nodes on the spoke.
	// +optional
	NodeCount int32 `json:"nodeCount"`

	// readyNodeCount is the number of Ready, schedulable Nodes.
	// +optional
	ReadyNodeCount int32 `json:"readyNodeCount"`

	// allocatable sums cpu, memory and pods allocatable over Ready, schedulable Nodes.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// placements is the number of owners (Propagations, ClusterPropagations, transparent-mode
	// objects) that have objects on the cluster, from their Delivery records. It reaches 0 when
	// a drain is complete: `kubectl wait cluster/NAME --for=jsonpath='{.status.placements}'=0`.
	// +optional
	Placements int32 `json:"placements"`

	// placed sums what the workloads Flotilla placed here request (cpu, memory, pods), from the
	// owners' Delivery records: what spec.placementLimits is measured against.
	// +optional
	Placed corev1.ResourceList `json:"placed,omitempty"`

	// lastProbeTime is when a health probe last found a change worth recording. Probes run far
	// more often; their freshness is exported as the metric
	// flotilla_cluster_last_probe_timestamp_seconds rather than written here.
	// +optional
	LastProbeTime *metav1.Time `json:"lastProbeTime,omitempty"`

	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Cluster is a spoke Kubernetes cluster of the fleet. Its labels are what placements select.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fcl,categories=flotilla
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="CPU",type=string,JSONPath=`.status.allocatable.cpu`
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.status.allocatable.memory`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.metadata.labels.flotilla\.dev/source`
// +kubebuilder:printcolumn:name="Placements",type=integer,JSONPath=`.status.placements`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Cordoned",type=boolean,priority=1,JSONPath=`.spec.unschedulable`
// +kubebuilder:printcolumn:name="Taints",type=string,priority=1,JSONPath=`.spec.taints[*].key`
// +kubebuilder:printcolumn:name="Pods",type=string,priority=1,JSONPath=`.status.allocatable.pods`
// +kubebuilder:printcolumn:name="Placed-CPU",type=string,priority=1,JSONPath=`.status.placed.cpu`
// +kubebuilder:printcolumn:name="Limit-CPU",type=string,priority=1,JSONPath=`.spec.placementLimits.cpu`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says how to reach the spoke and whether it takes placements.
	// +required
	Spec ClusterSpec `json:"spec"`

	// status is what Flotilla last observed of the spoke.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

func init() {
	register(&Cluster{}, &ClusterList{})
}

// ClusterMode is how a cluster gets its work: pushed by the hub, or pulled by its agent.
// +kubebuilder:validation:Enum=Push;Pull
type ClusterMode string

const (
	// ClusterPush: the hub connects to the spoke and delivers (the default).
	ClusterPush ClusterMode = "Push"
	// ClusterPull: the spoke's agent fetches its work from the hub; the hub never connects.
	ClusterPull ClusterMode = "Pull"
)

// Pulls reports whether the cluster gets its work through its agent (mode Pull).
func (c *Cluster) Pulls() bool { return c != nil && c.Spec.Mode == ClusterPull }
