package dashboard

import (
	"strconv"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// rolloutView is an owner's rollout as a page shows it: its status.rollout, and the approval
// the viewer may give when a stage waits for one.
type rolloutView struct {
	Owner    ownerRef
	Revision string // shortened
	Phase    string
	Message  string
	Stages   []flotillav1.RolloutStageStatus
	Waiting  string       // the stage that waits for approval
	Approve  *approveForm // set when the viewer may patch the owner
}

// approveForm posts an approval of one stage of one revision, as the viewer.
type approveForm struct {
	Action, Stage, Revision, CSRF, Return string
}

// rolloutOf is an owner's rollout for a viewer who may read the owner; back is the page the
// approval returns to.
func rolloutOf(v viewer, o ownerRef, st ownerStatus, back string) *rolloutView {
	r := st.Rollout
	if r == nil {
		return nil
	}
	view := &rolloutView{Owner: o, Revision: short(r.Revision), Phase: string(r.Phase), Message: r.Message, Stages: r.Stages,
		Waiting: rollout.WaitingStage(r)}
	if view.Waiting != "" && v.mayPatch(o) {
		view.Approve = &approveForm{Action: o.Path() + "/approve", Stage: view.Waiting, Revision: r.Revision, CSRF: v.csrf, Return: back}
	}
	return view
}

// mayRead says whether the viewer may get the owner object itself.
func (v viewer) mayRead(o ownerRef) bool {
	g, res := o.resource()
	return v.can(attrs{Verb: "get", Group: g, Resource: res, Namespace: o.Namespace, Name: o.Name})
}

// mayPatch says whether the viewer may patch the owner: what an approval takes.
func (v viewer) mayPatch(o ownerRef) bool {
	g, res := o.resource()
	return v.can(attrs{Verb: "patch", Group: g, Resource: res, Namespace: o.Namespace, Name: o.Name})
}

// policyStage is one stage of a Placement's spec.rollout, in words.
type policyStage struct {
	Name, Clusters, MaxUnavailable, Soak, Approval string
}

// rolloutPolicy is a Placement's spec.rollout as its page shows it.
type rolloutPolicy struct {
	Stages                        []policyStage
	ProgressDeadline, MaxFailures string
	Paused                        bool
}

func policyOf(p *flotillav1.RolloutPolicy) *rolloutPolicy {
	if p == nil {
		return nil
	}
	out := &rolloutPolicy{ProgressDeadline: flotillav1.DefaultRolloutDeadline.String(), MaxFailures: "0", Paused: p.Paused}
	if p.ProgressDeadline != nil {
		out.ProgressDeadline = p.ProgressDeadline.Duration.String()
	}
	if p.MaxFailures != nil {
		out.MaxFailures = p.MaxFailures.String()
	}
	for _, s := range p.Stages {
		ps := policyStage{Name: s.Name, MaxUnavailable: "25%", Soak: "0s", Approval: string(s.Approval)}
		if ps.Approval == "" {
			ps.Approval = string(flotillav1.ApprovalNone)
		}
		if s.MaxUnavailable != nil {
			ps.MaxUnavailable = s.MaxUnavailable.String()
		}
		if s.Soak != nil {
			ps.Soak = s.Soak.Duration.String()
		}
		ps.Clusters = stageClusters(s)
		out.Stages = append(out.Stages, ps)
	}
	out.Stages = append(out.Stages, policyStage{Name: flotillav1.RolloutRestStage, Clusters: "the clusters no stage matches",
		MaxUnavailable: "25%", Soak: "0s", Approval: string(flotillav1.ApprovalNone)})
	return out
}

func stageClusters(s flotillav1.RolloutStage) string {
	p := &flotillav1.Placement{Spec: flotillav1.PlacementSpec{ClusterNames: s.ClusterNames, ClusterSelector: s.ClusterSelector}}
	if len(s.ClusterNames) == 0 && s.ClusterSelector == nil {
		return "none"
	}
	if len(s.ClusterNames) > 10 {
		return strconv.Itoa(len(s.ClusterNames)) + " named clusters"
	}
	return selects(p)
}
