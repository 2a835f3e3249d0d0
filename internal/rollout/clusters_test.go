package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// rows says each cluster's row as "cluster=state@revision+since", since in seconds from t0.
func rows(out Outcome) string {
	var s []string
	for _, name := range []string{"a", "b", "c", "d"} {
		if r, ok := out.Clusters[name]; ok {
			s = append(s, fmt.Sprintf("%s=%s:%s@%s+%d", name, r.Stage, r.State, r.Revision, int(r.Since.Sub(t0).Seconds())))
		}
	}
	return strings.Join(s, " ")
}

// conditions says the rollout's conditions as "type=status/reason+lastTransition".
func conditions(s *flotillav1.RolloutStatus) string {
	var out []string
	for _, typ := range []string{flotillav1.RolloutConditionProgressing, flotillav1.RolloutConditionComplete, flotillav1.RolloutConditionHalted} {
		c := meta.FindStatusCondition(s.Conditions, typ)
		if c == nil {
			out = append(out, typ+"=none")
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s/%s+%d", typ, c.Status, c.Reason, int(c.LastTransitionTime.Sub(t0).Seconds())))
	}
	return strings.Join(out, " ")
}

func stageStates(s *flotillav1.RolloutStatus) string {
	var out []string
	for _, st := range s.Stages {
		out = append(out, st.Name+"="+string(st.State))
	}
	return strings.Join(out, " ")
}

func changes(cs []StageChange) string {
	var out []string
	for _, c := range cs {
		what := "started"
		if c.Complete {
			what = fmt.Sprintf("complete(%s)", c.Took)
		}
		out = append(out, c.Stage+" "+what+" "+c.Revision)
	}
	return strings.Join(out, ", ")
}

// TestEachClusterSaysWhereItStands walks a rollout through its stages and checks, pass by
// pass, each cluster's row (its since only moves when its state or revision does), each
// stage's state, the conditions (a transition time only moves when a status does) and the
// stages that started or completed.
func TestEachClusterSaysWhereItStands(t *testing.T) {
	pol := policy()
	pol.Stages[1].MaxUnavailable = &intstr.IntOrString{Type: intstr.Int, IntVal: 2}
	p := start(t, pol)
	for _, step := range []struct {
		name    string
		after   time.Duration // from t0
		do      func(p *pass)
		rows    string
		stages  string
		conds   string
		changes string
	}{
		{name: "the canary is let through", after: 0,
			rows:    "a=canary:Progressing@v2+0 b=prod:Pending@v1+0 c=prod:Pending@v1+0 d=rest:Pending@v1+0",
			stages:  "canary=Progressing prod=Pending rest=Pending",
			conds:   "Progressing=True/Progressing+0 Complete=False/Progressing+0 Halted=False/Progressing+0",
			changes: "canary started v2"},
		{name: "a pass that changes nothing keeps every time", after: 10 * time.Second,
			rows:   "a=canary:Progressing@v2+0 b=prod:Pending@v1+0 c=prod:Pending@v1+0 d=rest:Pending@v1+0",
			stages: "canary=Progressing prod=Pending rest=Pending",
			conds:  "Progressing=True/Progressing+0 Complete=False/Progressing+0 Halted=False/Progressing+0"},
		{name: "the canary is Ready and soaks", after: 20 * time.Second, do: func(p *pass) { p.ready("a") },
			rows:    "a=canary:Soaking@v2+20 b=prod:Pending@v1+0 c=prod:Pending@v1+0 d=rest:Pending@v1+0",
			stages:  "canary=Soaking prod=Pending rest=Pending",
			conds:   "Progressing=True/Soaking+0 Complete=False/Soaking+0 Halted=False/Soaking+0",
			changes: "canary complete(20s) v2"},
		{name: "soaked: prod waits for its approval", after: 81 * time.Second,
			rows:   "a=canary:Succeeded@v2+81 b=prod:WaitingForApproval@v1+81 c=prod:WaitingForApproval@v1+81 d=rest:Pending@v1+0",
			stages: "canary=Succeeded prod=WaitingForApproval rest=Pending",
			conds:  "Progressing=True/WaitingForApproval+0 Complete=False/WaitingForApproval+0 Halted=False/WaitingForApproval+0"},
		{name: "approved", after: 90 * time.Second, do: func(p *pass) { p.in.Approved = "prod@v2" },
			rows:    "a=canary:Succeeded@v2+81 b=prod:Progressing@v2+90 c=prod:Progressing@v2+90 d=rest:Pending@v1+0",
			stages:  "canary=Succeeded prod=Progressing rest=Pending",
			conds:   "Progressing=True/Progressing+0 Complete=False/Progressing+0 Halted=False/Progressing+0",
			changes: "prod started v2"},
		{name: "prod is done, the rest starts", after: 100 * time.Second, do: func(p *pass) { p.ready("b", "c") },
			rows:    "a=canary:Succeeded@v2+81 b=prod:Succeeded@v2+100 c=prod:Succeeded@v2+100 d=rest:Progressing@v2+100",
			stages:  "canary=Succeeded prod=Succeeded rest=Progressing",
			conds:   "Progressing=True/Progressing+0 Complete=False/Progressing+0 Halted=False/Progressing+0",
			changes: "prod complete(10s) v2, rest started v2"},
		{name: "complete", after: 110 * time.Second, do: func(p *pass) { p.ready("d") },
			rows:    "a=canary:Succeeded@v2+81 b=prod:Succeeded@v2+100 c=prod:Succeeded@v2+100 d=rest:Succeeded@v2+110",
			stages:  "canary=Succeeded prod=Succeeded rest=Succeeded",
			conds:   "Progressing=False/Complete+110 Complete=True/Complete+110 Halted=False/Complete+0",
			changes: "rest complete(10s) v2"},
	} {
		p.in.Now = t0.Add(step.after)
		if step.do != nil {
			step.do(p)
		}
		before := p.in.Memory
		p.run()
		if got := rows(p.out); got != step.rows {
			t.Errorf("%s: rows\n %s\nwant\n %s", step.name, got, step.rows)
		}
		if got := stageStates(p.out.Status); got != step.stages {
			t.Errorf("%s: stages %s, want %s", step.name, got, step.stages)
		}
		if got := conditions(p.out.Status); got != step.conds {
			t.Errorf("%s: conditions\n %s\nwant\n %s", step.name, got, step.conds)
		}
		if got := changes(Changes(before, p.out.Memory)); got != step.changes {
			t.Errorf("%s: stage changes %q, want %q", step.name, got, step.changes)
		}
	}
}

// TestHaltedAndUndoneRows: a failed cluster's row says Failed, the Halted condition names it
// and why; undone, every cluster's row is of the revision it returns to.
func TestHaltedAndUndoneRows(t *testing.T) {
	p := start(t, policy())
	p.run()
	p.in.Now = t0.Add(5 * time.Second)
	p.clusters["a"].Failed = "admission webhook denied the request"
	p.run()
	if got, want := rows(p.out), "a=canary:Failed@v2+5 b=prod:Pending@v1+0 c=prod:Pending@v1+0 d=rest:Pending@v1+0"; got != want {
		t.Errorf("halted: rows %s, want %s", got, want)
	}
	if got, want := conditions(p.out.Status), "Progressing=False/Halted+5 Complete=False/Halted+0 Halted=True/Halted+5"; got != want {
		t.Errorf("halted: conditions %s, want %s", got, want)
	}
	if c := meta.FindStatusCondition(p.out.Status.Conditions, flotillav1.RolloutConditionHalted); !strings.Contains(c.Message, "a: admission webhook denied the request") {
		t.Errorf("Halted says %q: it must name the cluster and why", c.Message)
	}
	if got := stageStates(p.out.Status); got != "canary=Failed prod=Pending rest=Pending" {
		t.Errorf("halted: stages %s", got)
	}
	p.in.Now = t0.Add(10 * time.Second)
	p.in.Undo = "v1@v2"
	p.run()
	p.run() // back at v1, Ready
	p.ready("a")
	p.in.Now = t0.Add(15 * time.Second)
	p.run()
	if got, want := rows(p.out), "a=canary:Succeeded@v1+15 b=prod:Succeeded@v1+10 c=prod:Succeeded@v1+10 d=rest:Succeeded@v1+10"; got != want {
		t.Errorf("undone: rows %s, want %s", got, want)
	}
	if got, want := conditions(p.out.Status), "Progressing=False/RolledBack+5 Complete=False/RolledBack+0 Halted=False/RolledBack+10"; got != want {
		t.Errorf("undone: conditions %s, want %s", got, want)
	}
}

// TestARestartKeepsTheTimesTheStatusSays: with nothing remembered (a restart), the gate's rows
// and conditions start now; settled against the status written before, they keep its times
// while nothing changed, and take the new ones where something did.
func TestARestartKeepsTheTimesTheStatusSays(t *testing.T) {
	p := start(t, policy())
	p.run()
	written, writtenRows := p.out.Status, p.out.Clusters
	p.in.Memory = Memory{} // restarted
	p.in.Now = t0.Add(time.Hour)
	p.ready("a")
	p.run()
	if got := rows(p.out); !strings.Contains(got, "b=prod:Pending@v1+3600") {
		t.Fatalf("after a restart the gate starts its times now: %s", got)
	}
	for name, row := range p.out.Clusters {
		prev := writtenRows[name]
		settled := SettleRow(&prev, &row)
		want := row.Since
		if name != "a" {
			want = prev.Since // same state and revision: the written since stays
		}
		if !settled.Since.Equal(&want) {
			t.Errorf("%s: settled since %s, want %s", name, settled.Since, want)
		}
	}
	settled := SettleStatus(written, p.out.Status)
	c := meta.FindStatusCondition(settled.Conditions, flotillav1.RolloutConditionProgressing)
	if c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t0) || c.Reason != string(flotillav1.RolloutSoaking) {
		t.Errorf("settled Progressing %+v: want True since t0, its reason the new phase (Soaking)", c)
	}
	if SettleRow(nil, nil) != nil || SettleStatus(nil, nil) != nil {
		t.Error("nothing settles to nothing")
	}
	if !slices.Equal(written.Conditions, written.DeepCopy().Conditions) {
		t.Error("settling changed the status written")
	}
}
