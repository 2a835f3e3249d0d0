package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// policy: canary (a) soaks a minute, prod (b, c) needs approval, the rest (d) follows.
func policy() *flotillav1.RolloutPolicy {
	return &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
		{Name: "canary", ClusterNames: []string{"a"}, Soak: &metav1.Duration{Duration: time.Minute}},
		{Name: "prod", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, Approval: flotillav1.ApprovalRequired},
	}}
}

func fleet(runs string) []Cluster {
	return []Cluster{
		{Name: "a", Runs: runs, Ready: true},
		{Name: "b", Labels: map[string]string{"env": "prod"}, Runs: runs, Ready: true},
		{Name: "c", Labels: map[string]string{"env": "prod"}, Runs: runs, Ready: true},
		{Name: "d", Runs: runs, Ready: true},
	}
}

// pass is one pass of the gate with the clusters as they run, remembered between passes.
type pass struct {
	t        *testing.T
	in       Input
	clusters map[string]*Cluster
	out      Outcome
}

func start(t *testing.T, p *flotillav1.RolloutPolicy) *pass {
	ps := &pass{t: t, in: Input{Policy: p, Latest: "v2", Now: t0}, clusters: map[string]*Cluster{}}
	for _, c := range fleet("v1") {
		ps.clusters[c.Name] = &c
	}
	return ps
}

// run runs the gate, then delivers what it let through: a released cluster runs v2 (not
// Ready yet), and a cluster held at another revision than it runs returns to it.
func (p *pass) run() {
	p.in.Clusters = nil
	for _, name := range []string{"a", "b", "c", "d"} {
		if c, ok := p.clusters[name]; ok {
			p.in.Clusters = append(p.in.Clusters, *c)
		}
	}
	p.out = Gate(p.in)
	p.in.Memory = p.out.Memory
	for name, c := range p.clusters {
		hold, held := p.out.Hold[name]
		switch {
		case !held && c.Runs != p.in.Latest:
			c.Runs, c.Ready = p.in.Latest, false
		case held && hold != c.Runs:
			c.Runs, c.Ready, c.Failed = hold, false, ""
		}
	}
}

func (p *pass) ready(names ...string) {
	for _, n := range names {
		p.clusters[n].Ready = true
	}
}

// at says which clusters run v2.
func (p *pass) at() string {
	var out []string
	for _, n := range []string{"a", "b", "c", "d"} {
		if c, ok := p.clusters[n]; ok && c.Runs == p.in.Latest {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

func (p *pass) expect(at string, phase flotillav1.RolloutPhase) {
	p.t.Helper()
	if got := p.at(); got != at {
		p.t.Fatalf("clusters at v2: %q, want %q (holds %v, status %+v)", got, at, p.out.Hold, p.out.Status)
	}
	if p.out.Status == nil || p.out.Status.Phase != phase {
		p.t.Fatalf("phase %+v, want %s", p.out.Status, phase)
	}
}

func TestStagesSoakAndApproval(t *testing.T) {
	p := start(t, policy())
	p.run()
	p.expect("a", flotillav1.RolloutProgressing)
	if p.out.Hold["b"] != "v1" || p.out.Hold["d"] != "v1" {
		t.Fatalf("holds %v, want b, c, d at v1", p.out.Hold)
	}
	p.run()
	p.expect("a", flotillav1.RolloutProgressing) // a is not Ready yet
	p.ready("a")
	p.run()
	p.expect("a", flotillav1.RolloutSoaking)
	if p.out.Next != time.Minute {
		t.Errorf("look again in %s, want when the soak ends (1m)", p.out.Next)
	}
	p.in.Now = t0.Add(time.Minute + time.Second)
	p.run()
	p.expect("a", flotillav1.RolloutWaitingForApproval)
	if !strings.Contains(p.out.Status.Message, "prod@v2") {
		t.Errorf("message %q does not say what approves", p.out.Status.Message)
	}
	p.in.Approved = "prod@v1" // an approval of another revision approves nothing
	p.run()
	p.expect("a", flotillav1.RolloutWaitingForApproval)
	p.in.Approved = "prod@v2"
	p.run()
	if got := p.at(); got != "a,b" && got != "a,c" {
		t.Fatalf("approved prod lets one of its two clusters through (maxUnavailable 25%%, at least 1): at v2 %q", got)
	}
	p.ready("b", "c")
	p.run()
	p.expect("a,b,c", flotillav1.RolloutProgressing)
	p.ready("b", "c")
	p.run()
	p.expect("a,b,c,d", flotillav1.RolloutProgressing)
	p.ready("d")
	p.run()
	p.expect("a,b,c,d", flotillav1.RolloutComplete)
	if len(p.out.Hold) != 0 {
		t.Errorf("a complete rollout holds %v", p.out.Hold)
	}
}

func TestAFailureHalts(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(p *pass)
	}{
		{"delivery fails", func(p *pass) { p.clusters["a"].Failed = "admission webhook denied the request" }},
		{"not Ready within the deadline", func(p *pass) { p.in.Now = t0.Add(flotillav1.DefaultRolloutDeadline + time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, policy())
			p.run()
			tc.fail(p)
			p.run()
			p.expect("a", flotillav1.RolloutHalted)
			if !strings.Contains(p.out.Status.Message, "a: ") {
				t.Errorf("halt message %q does not name the cluster", p.out.Status.Message)
			}
			p.in.Approved = "prod@v2"
			p.ready("a")
			p.clusters["a"].Failed = ""
			p.in.Now = p.in.Now.Add(time.Hour)
			p.run()
			// Ready at last: the stage is done now, and soaks from now.
			p.expect("a", flotillav1.RolloutSoaking)
		})
	}
}

func TestMaxFailuresAndPause(t *testing.T) {
	pol := policy()
	pol.Stages[0].Soak = nil
	pol.Stages[1].Approval = flotillav1.ApprovalNone
	pct := intstr.FromString("50%")
	pol.MaxFailures = &pct
	p := start(t, pol)
	p.run()
	p.clusters["a"].Failed = "refused"
	p.run()
	p.expect("a,b", flotillav1.RolloutProgressing) // one failure of four is within 50%
	pol.Paused = true
	p.ready("b")
	p.run()
	p.expect("a,b", flotillav1.RolloutPaused)
	pol.Paused = false
	p.run()
	p.expect("a,b,c", flotillav1.RolloutProgressing)
}

func TestMembershipChanges(t *testing.T) {
	pol := policy()
	pol.Stages[0].Soak = nil
	p := start(t, pol)
	p.run()
	// A cluster joins the prod stage, not reached yet: it runs nothing and is held at v1.
	p.clusters["e"] = &Cluster{Name: "e", Labels: map[string]string{"env": "prod"}}
	p.in.Clusters = append(p.in.Clusters, *p.clusters["e"])
	out := Gate(Input{Policy: pol, Latest: "v2", Now: t0, Clusters: append(fleetClusters(p), *p.clusters["e"]), Memory: p.in.Memory})
	if out.Hold["e"] != "v1" {
		t.Errorf("a new cluster of a stage not reached is held at %q, want the stable v1", out.Hold["e"])
	}
	// One that joins the canary stage, which is under way, gets v2 when its stage has room.
	p.ready("a")
	late := Cluster{Name: "a2"}
	pol.Stages[0].ClusterNames = append(pol.Stages[0].ClusterNames, "a2")
	out = Gate(Input{Policy: pol, Latest: "v2", Now: t0, Clusters: append(fleetClusters(p), late), Memory: p.in.Memory})
	if _, held := out.Hold["a2"]; held {
		t.Errorf("a new cluster of the stage under way is held: %v", out.Hold)
	}
	// A cluster that fails and then leaves is no longer counted: the rollout goes on.
	p.clusters["a"].Ready, p.clusters["a"].Failed = false, "refused"
	p.run()
	if p.out.Status.Phase != flotillav1.RolloutHalted {
		t.Fatalf("a failed canary: %+v, want halted", p.out.Status)
	}
	delete(p.clusters, "a")
	p.run()
	if p.out.Status.Phase == flotillav1.RolloutHalted {
		t.Errorf("a cluster that left halts the rollout: %+v", p.out.Status)
	}
}

// A cluster relabelled into a stage that waits for approval, already running the new revision,
// does not start that stage: its other clusters still wait.
func TestApprovalIsNotBypassedByARelabel(t *testing.T) {
	pol := policy()
	pol.Stages[0].Soak = nil
	p := start(t, pol)
	p.run()
	p.ready("a")
	p.run()
	p.expect("a", flotillav1.RolloutWaitingForApproval)
	p.clusters["a"].Labels = map[string]string{"env": "prod"} // a moves into prod, at v2
	pol.Stages[0].ClusterNames = nil
	p.run()
	if got := p.at(); got != "a" {
		t.Errorf("after a moved into prod, clusters at v2: %q; want b and c still waiting for approval", got)
	}
	if p.out.Status.Phase != flotillav1.RolloutWaitingForApproval {
		t.Errorf("phase %s, want WaitingForApproval", p.out.Status.Phase)
	}
}

// A cluster that was Ready at the new revision and blips later is not failed by the deadline.
func TestAReachedClusterIsNotFailedByTheDeadline(t *testing.T) {
	p := start(t, policy())
	p.run()
	p.ready("a")
	p.run()
	p.clusters["a"].Ready = false
	p.in.Now = t0.Add(flotillav1.DefaultRolloutDeadline + time.Minute)
	p.run()
	if p.out.Status.Phase == flotillav1.RolloutHalted {
		t.Errorf("a cluster Ready once, not Ready long after its release, halted the rollout: %+v", p.out.Status)
	}
}

// A cluster the hub cannot reach fails nothing. One not let through yet is passed over: it stays
// at what it runs and takes no room in flight. One let through holds its stage up to the
// progress deadline and no further. Either gets the revision when it returns, its deadline
// starting again then, and the rollout completes once it is Ready.
func TestAnUnreachableClusterFailsNothing(t *testing.T) {
	const deadline = time.Minute
	for _, tc := range []struct {
		name     string
		inFlight bool // it becomes unreachable after it was let through
	}{
		{"before its turn", false},
		{"in flight", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := policy()
			pol.Stages[0].Soak, pol.Stages[1].Approval = nil, flotillav1.ApprovalNone
			pol.ProgressDeadline = &metav1.Duration{Duration: deadline}
			p := start(t, pol)
			// x is the prod cluster let through first (maxUnavailable 25%: one at a time), y the other.
			x, y := "b", "c"
			if order("c", "v2") < order("b", "v2") {
				x, y = "c", "b"
			}
			p.run()
			p.ready("a")
			if tc.inFlight {
				p.run()
				p.expect("a,"+x, flotillav1.RolloutProgressing)
				p.clusters[x].Unreachable = "not Ready: ProbeTimeout"
				p.in.Now = t0.Add(deadline - time.Second)
				p.run()
				p.expect("a,"+x, flotillav1.RolloutProgressing) // it holds its stage up to the deadline
				if p.out.Next != time.Second {
					t.Errorf("look again in %s, want when its deadline ends (1s)", p.out.Next)
				}
				p.in.Now = t0.Add(deadline + time.Second)
				p.run()
				p.expect("a,"+x+","+y, flotillav1.RolloutProgressing) // and no further
			} else {
				p.clusters[x].Unreachable = "not Ready: ProbeTimeout"
				p.run()
				p.expect("a,"+y, flotillav1.RolloutProgressing)
				if p.out.Hold[x] != "v1" {
					t.Errorf("holds %v, want %s at v1 while it is unreachable", p.out.Hold, x)
				}
			}
			p.ready(y)
			p.run()
			p.ready("d")
			p.run()
			p.in.Now = p.in.Now.Add(time.Hour)
			p.run()
			// The rest is done: x runs v2 only if it was let through before it went away.
			done := strings.Replace("a,b,c,d", ","+x, "", 1)
			if tc.inFlight {
				done = "a,b,c,d"
			}
			p.expect(done, flotillav1.RolloutProgressing)
			if msg := p.out.Status.Message; !strings.Contains(msg, "every reachable cluster runs revision v2") || !strings.Contains(msg, x+" (not Ready: ProbeTimeout)") {
				t.Errorf("message %q does not say the rollout is done but for %s, unreachable", msg, x)
			}
			if p.out.Next != 0 {
				t.Errorf("look again in %s, want nothing on the clock", p.out.Next)
			}
			// Back: its deadline starts again; it is not failed for the time it was away.
			p.clusters[x].Unreachable = ""
			p.run()
			p.in.Now = p.in.Now.Add(deadline - time.Second)
			p.run()
			p.expect("a,b,c,d", flotillav1.RolloutProgressing)
			p.ready(x)
			p.run()
			p.expect("a,b,c,d", flotillav1.RolloutComplete)
		})
	}
	// Back and not Ready within the deadline from its return, it fails as any other would.
	pol := policy()
	pol.Stages[0].Soak = nil
	pol.ProgressDeadline = &metav1.Duration{Duration: deadline}
	p := start(t, pol)
	p.run()
	p.clusters["a"].Unreachable = "not connected"
	p.in.Now = t0.Add(time.Hour)
	p.run()
	p.expect("a", flotillav1.RolloutWaitingForApproval)
	p.clusters["a"].Unreachable = ""
	p.run()
	p.expect("a", flotillav1.RolloutProgressing)
	p.in.Now = p.in.Now.Add(deadline + time.Second)
	p.run()
	p.expect("a", flotillav1.RolloutHalted)
}

// A latest revision that is not kept goes to no cluster that runs another: they are held, and
// the rollout halts saying why.
func TestAnUnkeptRevisionGoesNowhere(t *testing.T) {
	out := Gate(Input{Policy: policy(), Latest: "v2", Unkept: "too large to keep", Clusters: append(fleet("v1"), Cluster{Name: "new"}), Now: t0})
	if len(out.Hold) != 5 || out.Hold["a"] != "v1" || out.Hold["new"] != "v1" {
		t.Errorf("holds %v, want every cluster at v1", out.Hold)
	}
	if out.Status == nil || out.Status.Phase != flotillav1.RolloutHalted || !strings.Contains(out.Status.Message, "too large to keep") {
		t.Errorf("status %+v, want halted saying why", out.Status)
	}
}

func fleetClusters(p *pass) []Cluster {
	var out []Cluster
	for _, n := range []string{"a", "b", "c", "d"} {
		if c, ok := p.clusters[n]; ok {
			out = append(out, *c)
		}
	}
	return out
}

func TestNothingToRollOut(t *testing.T) {
	if out := Gate(Input{Latest: "v2", Clusters: fleet("v1")}); out.Hold != nil || out.Status != nil {
		t.Errorf("no policy: %+v", out)
	}
	first := fleet("")
	if out := Gate(Input{Policy: policy(), Latest: "v1", Clusters: first, Now: t0}); len(out.Hold) != 0 || out.Status != nil {
		t.Errorf("a first delivery is not staged: %+v", out)
	}
	if out := Gate(Input{Policy: policy(), Latest: "v1", Clusters: fleet("v1"), Now: t0}); out.Status == nil || out.Status.Phase != flotillav1.RolloutComplete {
		t.Errorf("every cluster at the latest, Ready: %+v", out.Status)
	}
}

// The invariants: stages go in order (no cluster of a later stage takes the revision while one
// of an earlier stage has not finished, but for one unreachable and not let through), a stage
// never has more in flight than maxUnavailable lets through, a halted or paused rollout lets
// nothing new through, an unreachable cluster is never let through, and only clusters that do
// not run the latest revision are held.
func FuzzGate(f *testing.F) {
	f.Add(uint8(3), uint16(0x0f0f), uint8(0), uint8(1), false, uint8(0))
	f.Add(uint8(9), uint16(0xffff), uint8(2), uint8(0), true, uint8(0x21))
	f.Add(uint8(7), uint16(0x0000), uint8(0), uint8(0), false, uint8(0x09))
	f.Fuzz(func(t *testing.T, n uint8, state uint16, maxFail, unavailable uint8, paused bool, unreachable uint8) {
		size := int(n%8) + 1
		mu := intstr.FromInt32(int32(unavailable%3) + 1)
		mf := intstr.FromInt32(int32(maxFail % 3))
		pol := &flotillav1.RolloutPolicy{Paused: paused, MaxFailures: &mf, Stages: []flotillav1.RolloutStage{
			{Name: "one", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "one"}}, MaxUnavailable: &mu},
			{Name: "two", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "two"}}, MaxUnavailable: &mu},
		}}
		var clusters []Cluster
		stageOf := map[string]int{}
		for i := 0; i < size; i++ {
			c := Cluster{Name: fmt.Sprintf("c%d", i), Labels: map[string]string{"stage": []string{"one", "two", "rest"}[i%3]}, Runs: "v1", Ready: true}
			switch (state >> (2 * (i % 8))) & 3 {
			case 1:
				c.Runs, c.Ready = "v2", false
			case 2:
				c.Runs = "v2"
			case 3:
				c.Runs, c.Ready, c.Failed = "v2", false, "failed"
			}
			if unreachable&(1<<(i%8)) != 0 {
				c.Unreachable = "not Ready"
			}
			stageOf[c.Name] = i % 3
			clusters = append(clusters, c)
		}
		out := Gate(Input{Policy: pol, Latest: "v2", Clusters: clusters, Now: t0})
		released := map[string]bool{}
		inFlight := map[int]int{}
		for _, c := range clusters {
			_, held := out.Hold[c.Name]
			if held && c.Runs == "v2" {
				t.Fatalf("%s runs the latest revision and is held", c.Name)
			}
			if !held && c.Runs != "v2" {
				released[c.Name] = true
				if c.Unreachable != "" {
					t.Fatalf("%s is unreachable and let through", c.Name)
				}
			}
			if !held && !(c.Runs == "v2" && (c.Ready || c.Failed != "")) {
				inFlight[stageOf[c.Name]]++
			}
		}
		halted := out.Status != nil && out.Status.Phase == flotillav1.RolloutHalted
		if (halted || paused) && len(released) > 0 {
			t.Fatalf("halted %t paused %t, yet %v let through", halted, paused, released)
		}
		for s, k := range inFlight {
			if newly := countReleased(released, stageOf, s); newly > 0 && k > int(unavailable%3)+1 {
				t.Fatalf("stage %d has %d in flight after letting %d through, more than maxUnavailable %d", s, k, newly, int(unavailable%3)+1)
			}
		}
		for name := range released {
			for _, c := range clusters {
				// Unreachable and not let through, it holds nothing up (nothing is remembered: one let
				// through has all of its deadline left).
				away := c.Unreachable != "" && c.Runs != "v2"
				if stageOf[c.Name] < stageOf[name] && !(c.Runs == "v2" && (c.Ready || c.Failed != "")) && !away {
					t.Fatalf("%s (stage %d) let through while %s (stage %d) has not finished", name, stageOf[name], c.Name, stageOf[c.Name])
				}
			}
		}
	})
}

func countReleased(released map[string]bool, stageOf map[string]int, s int) int {
	n := 0
	for name := range released {
		if stageOf[name] == s {
			n++
		}
	}
	return n
}

// After a restart (nothing remembered) a stage already under way goes on without its approval
// being given again, and a cluster in flight is given its deadline afresh.
func TestARestartForgetsNothingThatMatters(t *testing.T) {
	pol := policy()
	pol.Stages[0].Soak = nil
	clusters := fleet("v1")
	clusters[0].Runs = "v2"                           // a, canary: done
	clusters[1].Runs, clusters[1].Ready = "v2", false // b, prod: in flight
	out := Gate(Input{Policy: pol, Latest: "v2", Clusters: clusters, Now: t0, Approved: "rest@v2"})
	if _, held := out.Hold["b"]; held || out.Status.Phase == flotillav1.RolloutWaitingForApproval {
		t.Errorf("prod under way before the restart waits for approval again: holds %v, %+v", out.Hold, out.Status)
	}
	clusters[1].Ready = true
	out = Gate(Input{Policy: pol, Latest: "v2", Clusters: clusters, Now: t0.Add(time.Second), Approved: "rest@v2", Memory: out.Memory})
	if _, held := out.Hold["c"]; held {
		t.Errorf("c, the rest of prod, is held after b is done: %v (%+v)", out.Hold, out.Status)
	}
}

func TestUndoReturnsEveryClusterWhileItNamesTheLatest(t *testing.T) {
	p := start(t, policy())
	p.run()
	p.clusters["a"].Failed = "admission webhook denied the request"
	p.run()
	p.expect("a", flotillav1.RolloutHalted)
	p.in.Undo = "v1@v3" // an undo of another revision undoes nothing
	p.run()
	p.expect("a", flotillav1.RolloutHalted)
	p.in.Undo = "v1@v2"
	p.run()
	p.expect("", flotillav1.RolloutRolledBack)
	for _, c := range []string{"a", "b", "c", "d"} {
		if p.out.Hold[c] != "v1" {
			t.Fatalf("undone: holds %v, want every cluster at v1", p.out.Hold)
		}
	}
	p.ready("a")
	p.run()
	if msg := p.out.Status.Message; !strings.Contains(msg, "4 of 4 clusters run v1") || !strings.Contains(msg, flotillav1.AnnotationUndo) {
		t.Errorf("message %q does not say how far the fleet is back, and how to roll out again", msg)
	}
	// Taken away: the revision rolls out again from its first stage.
	p.in.Undo = ""
	p.run()
	p.expect("a", flotillav1.RolloutProgressing)
}

func TestParseUndo(t *testing.T) {
	for value, want := range map[string]bool{"v1@v2": true, "v2@v2": false, "@v2": false, "v1@": false, "v1": false, "": false} {
		if _, _, ok := flotillav1.ParseUndo(value); ok != want {
			t.Errorf("ParseUndo(%q) ok = %v, want %v", value, ok, want)
		}
	}
}

func TestOnFailureRollback(t *testing.T) {
	pol := policy()
	pol.OnFailure = flotillav1.RolloutRollback
	p := start(t, pol)
	p.run()
	p.expect("a", flotillav1.RolloutProgressing)
	p.clusters["a"].Failed = "admission webhook denied the request"
	p.run()
	p.expect("", flotillav1.RolloutRolledBack)
	if p.out.Undo != "v1@v2" {
		t.Errorf("undo to set on the owner %q, want v1@v2", p.out.Undo)
	}
	if !strings.Contains(p.out.Status.Message, "a: admission webhook denied") || !strings.Contains(p.out.Status.Message, "onFailure: Rollback") {
		t.Errorf("message %q does not say which cluster failed and why it rolled back", p.out.Status.Message)
	}
	// Once the owner carries the undo, the fleet stays back, though nothing fails any more.
	p.in.Undo = p.out.Undo
	p.run()
	p.expect("", flotillav1.RolloutRolledBack)
	if p.out.Undo != "" {
		t.Errorf("undo set again: %q", p.out.Undo)
	}
	// With nothing older to return to, a halt stays a halt.
	p = start(t, pol)
	for _, c := range p.clusters {
		c.Runs = ""
	}
	p.clusters["a"].Runs, p.clusters["a"].Failed = "v2", "denied"
	p.run()
	if (p.out.Status != nil && p.out.Status.Phase == flotillav1.RolloutRolledBack) || p.out.Undo != "" || len(p.out.Hold) != 0 {
		t.Errorf("no stable revision: status %+v, undo %q; want no rollback", p.out.Status, p.out.Undo)
	}
}
