package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutPolicy rolls each new revision of an owner that uses the Placement out stage by
// stage. Clusters not reached yet keep running the revision they run (a pin the rollout
// holds; their drift is still corrected); a cluster is done once the new revision is applied
// there and its objects are Ready at the generation Flotilla wrote. Scaling and moves are not
// rollouts: a changed share or a newly chosen cluster applies at once, with the revision the
// cluster's stage has reached. The first delivery of an owner, with nothing running yet, is not
// staged.
// +kubebuilder:validation:XValidation:rule="!has(self.progressDeadline) || duration(self.progressDeadline) > duration('0s')",message="progressDeadline must be positive"
type RolloutPolicy struct {
	// stages in order. A cluster belongs to the first stage it matches; clusters that match
	// none form an implicit last stage, "rest", so a cluster that joins the Placement never
	// fails a rollout: it gets the revision its stage has reached.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Stages []RolloutStage `json:"stages,omitempty"`

	// progressDeadline is how long a cluster may take to be Ready at the new revision before
	// it counts as failed (default 10m).
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`

	// maxFailures is how many clusters (a number, or a percentage of the chosen clusters no
	// person pins) may fail the new revision before the rollout halts (default 0: the first
	// failure halts it). A halted rollout reaches no further cluster and rolls nothing back: the
	// clusters that have the new revision keep it, the others keep theirs, while the failed
	// clusters fail (it goes on when they recover, or with the owner's next change), unless
	// onFailure is Rollback.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="must not be negative"
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`

	// paused reaches no further cluster; those in flight finish. Scaling, moves and drift
	// correction go on.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// onFailure is what a rollout halted by failures does: Halt (the default) keeps every
	// cluster as it is; Rollback undoes it, as `flotilla rollout undo` would: Flotilla sets
	// flotilla.dev/undo=<stable>@<revision> on the owner, so every cluster returns to the
	// revision most of them ran before, until the owner changes or the annotation is removed.
	// +optional
	OnFailure RolloutOnFailure `json:"onFailure,omitempty"`
}

// RolloutOnFailure is what a halted rollout does.
// +kubebuilder:validation:Enum=Halt;Rollback
type RolloutOnFailure string

const (
	// RolloutHalt keeps every cluster as it is when a rollout halts.
	RolloutHalt RolloutOnFailure = "Halt"
	// RolloutRollback returns every cluster to the stable revision when a rollout halts.
	RolloutRollback RolloutOnFailure = "Rollback"
)

// RolloutStage is one step of a rollout.
// +kubebuilder:validation:XValidation:rule="self.name != 'rest'",message="rest is the name of the implicit last stage (the clusters no stage matches); choose another"
// +kubebuilder:validation:XValidation:rule="!has(self.soak) || duration(self.soak) >= duration('0s')",message="soak must not be negative"
type RolloutStage struct {
	// name identifies the stage in status and in approvals; not "rest", the implicit last
	// stage's.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusterNames and clusterSelector choose the stage's clusters (either matches); with
	// neither, it matches none.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// clusterSelector chooses the stage's clusters by their labels; {} matches every cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// maxUnavailable is how many of the stage's clusters (a number, or a percentage rounded
	// down, at least 1) take the new revision at once (default 25%).
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%$`
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 1",message="must be at least 1"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// soak is how long the rollout waits after every cluster of the stage is done before the
	// next stage starts.
	// +optional
	Soak *metav1.Duration `json:"soak,omitempty"`

	// approval is None (default) or Required: the stage starts only once the owner carries
	// the annotation flotilla.dev/approve=<stage>@<revision> for the revision rolling out
	// (`flotilla rollout approve`).
	// +optional
	// +kubebuilder:default=None
	Approval RolloutApproval `json:"approval,omitempty"`
}

// RolloutApproval says whether a stage waits for a person.
// +kubebuilder:validation:Enum=None;Required
type RolloutApproval string

const (
	// ApprovalNone starts the stage as soon as the stage before it is done and soaked.
	ApprovalNone RolloutApproval = "None"
	// ApprovalRequired also waits for flotilla.dev/approve=<stage>@<revision> on the owner.
	ApprovalRequired RolloutApproval = "Required"
)

// AnnotationApprove on an owner approves one stage of one revision's rollout:
// <stage>@<revision>.
const AnnotationApprove = "flotilla.dev/approve"

// AnnotationUndo on an owner rolls one revision's rollout back: <target>@<revision> holds
// every cluster no person pins at the kept revision target for as long as revision is the
// owner's latest (`flotilla rollout undo` writes it). Remove it to roll revision out again;
// the owner's next change rolls out as usual.
const AnnotationUndo = "flotilla.dev/undo"

// ParseUndo reads an AnnotationUndo value: the revision to return to, and the revision whose
// rollout it undoes.
func ParseUndo(value string) (target, revision string, ok bool) {
	target, revision, ok = strings.Cut(value, "@")
	return target, revision, ok && target != "" && revision != "" && target != revision
}

// RolloutRestStage is the implicit last stage of the clusters no stage matches.
const RolloutRestStage = "rest"

// DefaultRolloutDeadline is how long a cluster may take to be Ready at a new revision when the
// rollout does not say.
const DefaultRolloutDeadline = DefaultProgressDeadline

// RolloutStatus is where an owner's rollout of its latest revision stands.
type RolloutStatus struct {
	// revision is the revision rolling out (a ControllerRevision of the owner).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision,omitempty"`

	// phase is Progressing, Soaking, WaitingForApproval, Paused, Halted, RolledBack or
	// Complete.
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`

	// message says what the rollout waits for, or why it halted.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// stages say how far each stage is, in order.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=17
	Stages []RolloutStageStatus `json:"stages,omitempty"`

	// conditions say where the rollout stands in the form kstatus and `kubectl wait` read:
	// Progressing is True while the rollout moves or waits (its reason is the phase:
	// Progressing, Soaking, WaitingForApproval, Paused), False once it ended; Complete is True
	// when every cluster runs the revision, Ready; Halted is True while failures past
	// maxFailures stop it, its message naming the failed clusters and why. Every reason is the
	// phase; an undone rollout (RolledBack) has all three False. lastTransitionTime changes only when a condition's status does.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=4
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The condition types of status.rollout.conditions.
const (
	// RolloutConditionProgressing is True while the rollout moves or waits for its clock or a
	// person; its reason is the phase.
	RolloutConditionProgressing = "Progressing"
	// RolloutConditionComplete is True when every cluster runs the revision, Ready.
	RolloutConditionComplete = "Complete"
	// RolloutConditionHalted is True while failures past maxFailures halt the rollout; its
	// message names the failed clusters and why.
	RolloutConditionHalted = "Halted"
)

// ClusterRolloutState is where one cluster stands in its owner's rollout.
type ClusterRolloutState struct {
	// stage is the stage the cluster is in (rest: the clusters no stage matches).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Stage string `json:"stage,omitempty"`

	// state is Pending (waiting for its stage's turn, at the revision it runs),
	// WaitingForApproval (its stage waits for flotilla.dev/approve), Progressing (it has the
	// new revision, not Ready yet), Soaking (Ready at it, its stage soaks), Succeeded (Ready
	// at it) or Failed (it refused the revision, or was not Ready within progressDeadline).
	// +required
	State RolloutClusterState `json:"state"`

	// revision is the owner's revision (a ControllerRevision's name) the cluster runs or is
	// given: the new one once let through, the one it is held at before.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision,omitempty"`

	// since is when the cluster entered this state for this revision. It survives passes
	// that change nothing; after a restart of the hub controller it is kept while the state
	// is the same.
	// +optional
	Since metav1.Time `json:"since,omitempty"`
}

// RolloutClusterState is where a cluster, or a stage, stands in a rollout.
// +kubebuilder:validation:Enum=Pending;WaitingForApproval;Progressing;Soaking;Succeeded;Failed
type RolloutClusterState string

// The states of a cluster in a rollout, and of a stage (a stage is Progressing while any of
// its clusters is let through and it is not finished, Failed when it finished with failures).
const (
	RolloutClusterPending            RolloutClusterState = "Pending"
	RolloutClusterWaitingForApproval RolloutClusterState = "WaitingForApproval"
	RolloutClusterProgressing        RolloutClusterState = "Progressing"
	RolloutClusterSoaking            RolloutClusterState = "Soaking"
	RolloutClusterSucceeded          RolloutClusterState = "Succeeded"
	RolloutClusterFailed             RolloutClusterState = "Failed"
)

// RolloutStageStatus counts one stage's clusters by where they are.
type RolloutStageStatus struct {
	// name is the stage's (rest: the clusters no stage matches).
	// +required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// state is where the stage stands: Pending, WaitingForApproval, Progressing, Soaking,
	// Succeeded (every cluster Ready at the revision, soak passed) or Failed (finished with
	// failed clusters); absent for a stage no chosen cluster is in.
	// +optional
	State RolloutClusterState `json:"state,omitempty"`
	// clusters is how many chosen clusters the stage has.
	Clusters int32 `json:"clusters"`
	// done is how many run the new revision, applied and Ready.
	Done int32 `json:"done"`
	// inFlight is how many have the new revision and are not Ready at it yet.
	InFlight int32 `json:"inFlight"`
	// failed is how many failed the new revision (refused it, or not Ready in time).
	Failed int32 `json:"failed"`
	// pending is how many wait for their turn, at the revision they run.
	Pending int32 `json:"pending"`
}

// RolloutPhase is where a rollout stands.
// +kubebuilder:validation:Enum=Progressing;Soaking;WaitingForApproval;Paused;Halted;RolledBack;Complete
type RolloutPhase string

// The phases of a rollout: clusters are taking the revision; a stage is done and soaks; a
// stage waits for its approval; spec.rollout.paused; failures past maxFailures; undone
// (flotilla.dev/undo: every cluster returns to an earlier revision); every cluster runs the
// revision.
const (
	RolloutProgressing        RolloutPhase = "Progressing"
	RolloutSoaking            RolloutPhase = "Soaking"
	RolloutWaitingForApproval RolloutPhase = "WaitingForApproval"
	RolloutPaused             RolloutPhase = "Paused"
	RolloutHalted             RolloutPhase = "Halted"
	RolloutRolledBack         RolloutPhase = "RolledBack"
	RolloutComplete           RolloutPhase = "Complete"
)
