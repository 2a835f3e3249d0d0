package rollout

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Cluster is one chosen cluster as the gate sees it.
type Cluster struct {
	Name   string
	Labels map[string]string
	// Runs is the owner's revision the cluster runs, as its record says ("" when none is
	// known: a cluster new to the owner).
	Runs string
	// Ready says Runs is applied there and Ready at the generation Flotilla wrote; Failed
	// says why its delivery of Runs failed ("" when it did not).
	Ready  bool
	Failed string
	// Unreachable says why the hub cannot reach the cluster now ("" when it can): its Cluster
	// is not Ready, or the deliverer is not connected to it. Such a cluster fails nothing: one
	// not let through yet is passed over (it stays at what it runs), one let through holds its
	// stage up to the progress deadline and no further, and either gets the revision when it
	// returns, its deadline starting again then.
	Unreachable string
}

// Input is one pass of an owner's rollout.
type Input struct {
	Policy *flotillav1.RolloutPolicy
	// Latest is the name of the owner's latest revision. Unkept says why it is not kept ("" when
	// it is): a revision no cluster could be held at later is rolled out nowhere (halted).
	Latest   string
	Unkept   string
	Clusters []Cluster
	// Approved is the owner's flotilla.dev/approve annotation, Undo its flotilla.dev/undo.
	Approved, Undo string
	Now            time.Time
	Memory         Memory
}

// Memory is what the gate remembers of one owner's rollout between passes.
type Memory struct {
	// Revision is the revision the rollout was of; a new one starts afresh.
	Revision string
	// Released says when each cluster was let through to Revision, ReleasedIn by which stage;
	// Reached which were Ready at it once (no deadline fails them after); Done when each stage
	// was done.
	Released   map[string]time.Time
	ReleasedIn map[string]string
	Reached    map[string]bool
	Done       map[string]time.Time
	// Away are the clusters let through that were unreachable at the last pass: when one
	// returns, its deadline starts again.
	Away map[string]bool
	// Started says when this rollout first let a cluster of each stage through (not set for a
	// stage found started with nothing remembered, after a restart): a stage's duration is
	// from it to Done.
	Started map[string]time.Time
	// Entered says which state (state@revision) each cluster's row was in at the last pass,
	// and Since since when; Conditions are the rollout's conditions as last reported. They
	// outlive a new revision (a cluster still pending at the revision it runs stays so) and
	// an undo, so that a pass that changes nothing reports nothing new.
	Entered    map[string]string
	Since      map[string]time.Time
	Conditions []metav1.Condition
}

// Outcome is what the gate decided.
type Outcome struct {
	// Hold are the clusters not reached yet, each with the revision it stays at.
	Hold map[string]string
	// Status is nil when nothing rolls out (no policy, or nothing runs yet).
	Status *flotillav1.RolloutStatus
	Memory Memory
	// Next is when a soak or a deadline ends (0: nothing waits on the clock).
	Next time.Duration
	// Undo, when set, is the flotilla.dev/undo value to set on the owner: the rollout halted
	// and its policy rolls back (onFailure: Rollback). Hold already returns every cluster.
	Undo string
	// Clusters is where each cluster stands (its row of the owner's per-cluster status), by
	// name; nil when Status is.
	Clusters map[string]flotillav1.ClusterRolloutState
}

// state is where one cluster stands in the rollout.
type state int

const (
	pending state = iota
	inFlight
	done
	failed
)

// member is a cluster in its stage.
type member struct {
	Cluster
	state state
	why   string // why it failed
	// away: unreachable, and not let through, or let through longer than the progress
	// deadline ago. It holds nothing up (its stage can finish, it takes no room in flight)
	// and fails nothing.
	away bool
}

// Gate decides which clusters may take the latest revision now.
func Gate(in Input) Outcome {
	if in.Policy == nil || in.Latest == "" {
		return Outcome{}
	}
	if target, revision, ok := flotillav1.ParseUndo(in.Undo); ok && revision == in.Latest {
		return undone(in, target, flotillav1.AnnotationUndo)
	}
	stable := stableRevision(in.Clusters, in.Latest)
	if in.Unkept != "" {
		return unkept(in, stable)
	}
	mem := in.Memory
	// fresh: nothing is remembered of this rollout (it starts, or the controller restarted), so
	// a cluster that runs the revision already counts as let through by this rollout.
	fresh := mem.Revision != in.Latest
	if fresh {
		mem = Memory{Revision: in.Latest, Entered: mem.Entered, Since: mem.Since, Conditions: mem.Conditions}
	}
	// Copies: the caller's memory stays as it was.
	mem.Released, mem.Done, mem.Started = cloned(mem.Released), cloned(mem.Done), cloned(mem.Started)
	mem.Reached, mem.ReleasedIn, mem.Away = cloned(mem.Reached), cloned(mem.ReleasedIn), cloned(mem.Away)
	if stable == "" && len(mem.Released) == 0 {
		// Nothing runs an older revision: a first delivery, or a rollout long done.
		out := Outcome{Memory: mem, Status: completeOrNothing(in)}
		if out.Status != nil {
			stages := stagesOf(in)
			for _, st := range stages {
				for i := range st.members {
					st.members[i].state = done
				}
			}
			out.finish(in, stages, nil)
		}
		return out
	}
	out := Outcome{Hold: map[string]string{}, Memory: mem}
	deadline := flotillav1.DefaultRolloutDeadline
	if d := in.Policy.ProgressDeadline; d != nil {
		deadline = d.Duration
	}
	stages := stagesOf(in)
	failures, failedWhy := 0, []string{}
	for _, st := range stages {
		for i := range st.members {
			m := &st.members[i]
			if _, known := mem.Released[m.Name]; fresh && !known && m.Runs == in.Latest {
				// Nothing remembered: one that runs the revision was let through by this rollout
				// (before a restart), in its stage; its deadline starts again.
				mem.Released[m.Name], mem.ReleasedIn[m.Name] = in.Now, st.name
			}
			released, at := mem.Released[m.Name]
			if at && m.Unreachable == "" && mem.Away[m.Name] {
				// Back: the time it was away is not held against it.
				released, mem.Released[m.Name] = in.Now, in.Now
				delete(mem.Away, m.Name)
			}
			switch {
			case m.Runs == in.Latest && m.Ready:
				m.state = done
				mem.Reached[m.Name] = true
				delete(mem.Away, m.Name)
			case m.Runs == in.Latest && m.Failed != "":
				m.state, m.why = failed, m.Failed
			case (m.Runs == in.Latest || at) && m.Unreachable != "":
				m.state, m.away = inFlight, !at || in.Now.Sub(released) > deadline
				if at && !mem.Reached[m.Name] {
					mem.Away[m.Name] = true
				}
			case m.Runs == in.Latest || at:
				m.state = inFlight
				if at && !mem.Reached[m.Name] && in.Now.Sub(released) > deadline {
					m.state, m.why = failed, fmt.Sprintf("not Ready within %s", deadline)
				}
			default:
				m.away = m.Unreachable != "" // pending
			}
			if m.state == failed {
				failures++
				failedWhy = append(failedWhy, m.Name+": "+m.why)
			}
		}
	}
	status := &flotillav1.RolloutStatus{Revision: in.Latest}
	halted := failures > allowedFailures(in.Policy.MaxFailures, len(in.Clusters))
	reachable := true
	for _, st := range stages {
		if len(st.members) == 0 {
			continue // a stage none of the chosen clusters is in gates nothing: no approval, no soak
		}
		if reachable && !halted && !in.Policy.Paused {
			switch {
			case st.approval == flotillav1.ApprovalRequired && in.Approved != st.name+"@"+in.Latest && !st.started(mem):
				reachable, st.waiting = false, true
				setPhase(status, flotillav1.RolloutWaitingForApproval, fmt.Sprintf("stage %s waits for approval: flotilla rollout approve, or kubectl annotate the owner %s=%s@%s",
					st.name, flotillav1.AnnotationApprove, st.name, in.Latest))
			default:
				st.release(in, &mem)
			}
		}
		for _, m := range st.members {
			if m.state == pending {
				if hold := holdAt(m.Cluster, stable); hold != "" {
					out.Hold[m.Name] = hold
				}
			}
		}
		if !reachable {
			continue
		}
		if !st.finished() {
			reachable = false
			continue
		}
		doneAt, ok := mem.Done[st.name]
		if !ok && halted {
			continue // a stage finished with failures past the budget is not done: nothing soaks
		}
		if !ok {
			doneAt = in.Now
			mem.Done[st.name] = doneAt
		}
		if soak := st.soak; soak > 0 && in.Now.Sub(doneAt) < soak {
			reachable, st.soaking = false, true
			left := soak - in.Now.Sub(doneAt)
			out.Next = earliest(out.Next, left)
			setPhase(status, flotillav1.RolloutSoaking, fmt.Sprintf("stage %s is done; the next starts after its soak of %s, at %s",
				st.name, soak, doneAt.Add(soak).UTC().Format(time.RFC3339)))
		}
	}
	var away []string
	for _, st := range stages {
		for _, m := range st.members {
			if released, at := mem.Released[m.Name]; at && m.state == inFlight && !m.away {
				out.Next = earliest(out.Next, deadline-in.Now.Sub(released))
			}
			if m.away {
				away = append(away, m.Name+" ("+m.Unreachable+")")
			}
		}
	}
	if halted && in.Policy.OnFailure == flotillav1.RolloutRollback && stable != "" {
		sort.Strings(failedWhy)
		in.Memory = mem
		out := undone(in, stable, limit(fmt.Sprintf("%d cluster(s) failed revision %s (%s); onFailure: Rollback",
			failures, in.Latest, strings.Join(failedWhy, "; "))))
		out.Undo = stable + "@" + in.Latest
		return out
	}
	for _, st := range stages {
		status.Stages = append(status.Stages, st.status())
	}
	sort.Strings(away)
	passedOver := ""
	if len(away) > 0 {
		passedOver = fmt.Sprintf("; unreachable, passed over until they return (then they get it): %s", strings.Join(away, ", "))
	}
	switch {
	case halted:
		sort.Strings(failedWhy)
		setPhase(status, flotillav1.RolloutHalted, limit(fmt.Sprintf("halted: %d cluster(s) failed revision %s, more than maxFailures allows (%s); nothing is rolled back, and no other cluster is reached while they fail (until they recover, or the owner changes)",
			failures, in.Latest, strings.Join(failedWhy, "; "))))
	case in.Policy.Paused:
		setPhase(status, flotillav1.RolloutPaused, "paused (the Placement's spec.rollout.paused, or kubectl rollout pause of the owner): clusters in flight finish, no other is reached")
	case allDone(stages):
		setPhase(status, flotillav1.RolloutComplete, "every cluster runs revision "+in.Latest)
	case status.Phase == "" && allFinished(stages):
		setPhase(status, flotillav1.RolloutProgressing, "every reachable cluster runs revision "+in.Latest+passedOver)
	case status.Phase == "":
		setPhase(status, flotillav1.RolloutProgressing, "rolling out revision "+in.Latest+passedOver)
	default:
		setPhase(status, status.Phase, status.Message+passedOver)
	}
	out.Status, out.Memory = status, mem
	out.finish(in, stages, out.Hold)
	return out
}

// unkept is the outcome for a latest revision that is not kept: every cluster that runs another
// revision stays at it, and the rollout says why it halted.
func unkept(in Input, stable string) Outcome {
	out := Outcome{Hold: map[string]string{}, Memory: Memory{Revision: in.Latest, Entered: in.Memory.Entered, Since: in.Memory.Since, Conditions: in.Memory.Conditions}}
	for _, c := range in.Clusters {
		if c.Runs != "" && c.Runs != in.Latest {
			out.Hold[c.Name] = c.Runs
		} else if c.Runs == "" && stable != "" {
			out.Hold[c.Name] = stable
		}
	}
	if len(out.Hold) > 0 {
		out.Status = &flotillav1.RolloutStatus{Revision: in.Latest, Phase: flotillav1.RolloutHalted,
			Message: limit("halted: revision " + in.Latest + " is not kept (" + in.Unkept + "), so no cluster could be held at it later: it goes to no cluster that runs another revision")}
		stages := stagesOf(in)
		for _, st := range stages {
			for i := range st.members {
				st.members[i].state = ranState(st.members[i].Cluster, in.Latest)
			}
		}
		out.finish(in, stages, out.Hold)
	}
	return out
}

// undone is the outcome of a rollout undone (flotilla.dev/undo, or onFailure: Rollback; why
// says which): every cluster is held at target. Nothing is remembered of the rollout, so taking
// the undo away rolls the revision out again from its first stage.
func undone(in Input, target, why string) Outcome {
	out := Outcome{Hold: make(map[string]string, len(in.Clusters)), Memory: Memory{Entered: in.Memory.Entered, Since: in.Memory.Since, Conditions: in.Memory.Conditions}}
	back := 0
	for _, c := range in.Clusters {
		out.Hold[c.Name] = target
		if c.Runs == target && c.Ready {
			back++
		}
	}
	out.Status = &flotillav1.RolloutStatus{Revision: in.Latest, Phase: flotillav1.RolloutRolledBack, Message: limit(fmt.Sprintf(
		"revision %s is rolled back to %s (%s): %d of %d clusters run %s, Ready; remove %s from the owner to roll %s out again",
		in.Latest, target, why, back, len(in.Clusters), target, flotillav1.AnnotationUndo, in.Latest))}
	stages := stagesOf(in)
	for _, st := range stages {
		for i := range st.members {
			st.members[i].state = ranState(st.members[i].Cluster, target)
		}
	}
	out.finish(in, stages, out.Hold)
	return out
}

// stage is one stage of the rollout with its members.
type stage struct {
	name           string
	maxUnavailable *intstr.IntOrString
	soak           time.Duration
	approval       flotillav1.RolloutApproval
	members        []member
	// waiting: the stage waits for its approval; soaking: it is done and soaks.
	waiting, soaking bool
}

// stagesOf puts each chosen cluster in the first stage it matches, the others in "rest", and
// orders each stage's members by a hash of the cluster and the revision.
func stagesOf(in Input) []*stage {
	stages := make([]*stage, 0, len(in.Policy.Stages)+1)
	for _, s := range in.Policy.Stages {
		st := &stage{name: s.Name, maxUnavailable: s.MaxUnavailable, approval: s.Approval}
		if s.Soak != nil {
			st.soak = s.Soak.Duration
		}
		stages = append(stages, st)
	}
	rest := &stage{name: flotillav1.RolloutRestStage}
	for _, c := range in.Clusters {
		home := rest
		for i, s := range in.Policy.Stages {
			if matches(s, c) {
				home = stages[i]
				break
			}
		}
		home.members = append(home.members, member{Cluster: c})
	}
	if len(rest.members) > 0 {
		stages = append(stages, rest)
	}
	for _, st := range stages {
		slices.SortFunc(st.members, func(a, b member) int {
			if c := cmp.Compare(order(a.Name, in.Latest), order(b.Name, in.Latest)); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
	}
	return stages
}

// matches reports whether a stage chooses a cluster: by name, or by labels.
func matches(s flotillav1.RolloutStage, c Cluster) bool {
	if slices.Contains(s.ClusterNames, c.Name) {
		return true
	}
	if s.ClusterSelector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(s.ClusterSelector)
	return err == nil && sel.Matches(labels.Set(c.Labels))
}

// order is a cluster's place within its stage for one revision.
func order(cluster, revision string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(revision + "/" + cluster))
	return h.Sum32()
}

// release lets pending members through, up to maxUnavailable in flight.
func (st *stage) release(in Input, mem *Memory) {
	room := maxInFlight(st.maxUnavailable, len(st.members))
	for _, m := range st.members {
		if m.state == inFlight && !m.away {
			room--
		}
	}
	first := !st.started(*mem)
	for i := range st.members {
		m := &st.members[i]
		if room <= 0 {
			return
		}
		if m.state != pending || m.away {
			continue // an unreachable cluster is let through when it returns
		}
		m.state = inFlight
		if _, at := mem.Released[m.Name]; !at {
			mem.Released[m.Name], mem.ReleasedIn[m.Name] = in.Now, st.name
		}
		if _, known := mem.Started[st.name]; first && !known {
			mem.Started[st.name] = in.Now // the stage starts now, in this pass
		}
		room--
	}
}

// started reports whether this rollout let a member of the stage through already, as a member
// of this stage (an approval gates a stage's start, not the clusters of a stage already
// started, and a later approval does not take it back). A member let through elsewhere, or that
// runs the revision without this rollout having let it through (it was relabelled into the
// stage, say), starts nothing; with nothing remembered (a restart), one that runs it is taken
// as let through in its stage.
func (st *stage) started(mem Memory) bool {
	for _, m := range st.members {
		if m.state != pending && mem.ReleasedIn[m.Name] == st.name {
			return true
		}
	}
	return false
}

// finished reports whether every member is done, failed or away.
func (st *stage) finished() bool {
	for _, m := range st.members {
		if (m.state == pending || m.state == inFlight) && !m.away {
			return false
		}
	}
	return true
}

func allFinished(stages []*stage) bool {
	for _, st := range stages {
		if !st.finished() {
			return false
		}
	}
	return true
}

func (st *stage) status() flotillav1.RolloutStageStatus {
	s := st.counts()
	s.State = st.state()
	return s
}

// counts counts the stage's members by state.
func (st *stage) counts() flotillav1.RolloutStageStatus {
	s := flotillav1.RolloutStageStatus{Name: st.name, Clusters: int32(len(st.members))}
	for _, m := range st.members {
		switch m.state {
		case pending:
			s.Pending++
		case inFlight:
			s.InFlight++
		case done:
			s.Done++
		case failed:
			s.Failed++
		}
	}
	return s
}

func allDone(stages []*stage) bool {
	for _, st := range stages {
		for _, m := range st.members {
			if m.state != done {
				return false
			}
		}
	}
	return true
}

// stableRevision is the revision most clusters run other than latest ("" when none does): a
// cluster not reached yet that runs nothing is held at it. Ties go to the smaller name.
func stableRevision(clusters []Cluster, latest string) string {
	count := map[string]int{}
	for _, c := range clusters {
		if c.Runs != "" && c.Runs != latest {
			count[c.Runs]++
		}
	}
	best := ""
	for rev, n := range count {
		if best == "" || n > count[best] || (n == count[best] && rev < best) {
			best = rev
		}
	}
	return best
}

// holdAt is the revision a cluster not reached yet stays at: the one it runs, or the stable one.
func holdAt(c Cluster, stable string) string {
	if c.Runs != "" {
		return c.Runs
	}
	return stable
}

// completeOrNothing is the status of a rollout with nothing to hold: Complete once every
// chosen cluster runs latest Ready, none while a first delivery is under way.
func completeOrNothing(in Input) *flotillav1.RolloutStatus {
	if len(in.Clusters) == 0 {
		return nil
	}
	for _, c := range in.Clusters {
		if c.Runs != in.Latest || !c.Ready {
			return nil
		}
	}
	return &flotillav1.RolloutStatus{Revision: in.Latest, Phase: flotillav1.RolloutComplete, Message: "every cluster runs revision " + in.Latest}
}

// maxInFlight resolves a stage's maxUnavailable (default 25%, rounded down, at least 1).
func maxInFlight(v *intstr.IntOrString, n int) int {
	d := intstr.FromString("25%")
	if v != nil {
		d = *v
	}
	k, err := intstr.GetScaledValueFromIntOrPercent(&d, n, false)
	if err != nil || k < 1 {
		return 1
	}
	return k
}

// allowedFailures resolves maxFailures (default 0) against the chosen clusters.
func allowedFailures(v *intstr.IntOrString, n int) int {
	if v == nil {
		return 0
	}
	k, err := intstr.GetScaledValueFromIntOrPercent(v, n, false)
	if err != nil {
		return 0
	}
	return k
}

func setPhase(s *flotillav1.RolloutStatus, p flotillav1.RolloutPhase, msg string) {
	s.Phase, s.Message = p, limit(msg)
}

func limit(s string) string {
	if len(s) > 1024 {
		return s[:1021] + "..."
	}
	return s
}

func earliest(a, b time.Duration) time.Duration {
	if b <= 0 {
		return a
	}
	if a == 0 || b < a {
		return b
	}
	return a
}

// cloned is a copy of m, never nil.
func cloned[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	maps.Copy(out, m)
	return out
}
