package ownerpass

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// The reasons of the Events that say a rollout's stage started or completed.
const (
	ReasonStageStarted  = "RolloutStageStarted"
	ReasonStageComplete = "RolloutStageComplete"
)

// ReportStages emits a Normal Event on obj for each stage of a rollout that started or
// completed in a pass (Result.Stages), naming the stage and the revision: every owner kind
// says them the same way.
func ReportStages(rec record.EventRecorder, obj runtime.Object, changes []rollout.StageChange) {
	if rec == nil {
		return
	}
	for _, c := range changes {
		if c.Complete {
			took := ""
			if c.Took > 0 {
				took = fmt.Sprintf(" in %s", c.Took.Round(time.Millisecond))
			}
			rec.Eventf(obj, corev1.EventTypeNormal, ReasonStageComplete, "stage %s completed revision %s%s", c.Stage, c.Revision, took)
			continue
		}
		rec.Eventf(obj, corev1.EventTypeNormal, ReasonStageStarted, "stage %s started revision %s", c.Stage, c.Revision)
	}
}

// ReportRollout says on obj what a pass found of its rollout: RolloutEvent when its phase or
// revision changed, then its stages (ReportStages).
func ReportRollout(rec record.EventRecorder, obj runtime.Object, res *Result) {
	if res == nil {
		return
	}
	if res.RolloutChanged {
		RolloutEvent(rec, obj, res.Rollout)
	}
	ReportStages(rec, obj, res.Stages)
}

// RolloutEvent emits the Event of a rollout's new phase on obj: a Warning when it halts, a
// Normal Event otherwise; every owner kind says it the same way.
func RolloutEvent(rec record.EventRecorder, obj runtime.Object, s *flotillav1.RolloutStatus) {
	if rec == nil || s == nil {
		return
	}
	kind := corev1.EventTypeNormal
	if s.Phase == flotillav1.RolloutHalted {
		kind = corev1.EventTypeWarning
	}
	rec.Event(obj, kind, "Rollout"+string(s.Phase), ownerkinds.Limit("revision "+s.Revision+": "+s.Message, 1024))
}
