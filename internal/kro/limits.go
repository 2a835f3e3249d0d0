package kro

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	krocel "github.com/kubernetes-sigs/kro/pkg/cel"
	"github.com/kubernetes-sigs/kro/pkg/graph"
	"github.com/kubernetes-sigs/kro/pkg/graph/variable"
)

// An instance's author controls what kro's CEL costs through the instance's spec (a
// comprehension over a list the spec provides), and it runs on the hub. kro v0.9.4 compiles its
// programs with no cost limit and evaluates them with no context (Program.Eval), and its graph
// builder takes no CEL options; but the compiled programs are exported fields of the graph's
// expressions. So Compile compiles each expression once more, from its source, with cel-go's
// cost limit and interrupt check, and each evaluation runs on a copy of the graph whose
// expressions evaluate those programs with the evaluation's context (ContextEval), counting
// what the whole evaluation spends. The programs are checked with kro's own CEL libraries and
// every identifier an expression can use declared dynamic: at run time kro hands them
// schema-typed values, so results are kro's.

// The limits' defaults are Kubernetes' own for CEL in the API server: the cost of one call
// (about 0.1 s) and of everything one object's validation evaluates (about 1 s).
const (
	DefaultCELCostLimit  = celconfig.PerCallLimit
	DefaultCELCostBudget = celconfig.RuntimeCELCostBudget
	// interruptCheckFrequency is how many comprehension iterations run between two looks at
	// the context.
	interruptCheckFrequency = 100
)

// ErrCELLimit is matched (errors.Is) by the error of an evaluation stopped by a limit: an
// expression over the cost limit, an evaluation over its budget, or its context ended.
var ErrCELLimit = errors.New("CEL evaluation limit")

// LimitError says why an evaluation was stopped. kro names the expression around it.
type LimitError struct {
	// Limit is the cost limit of one expression, or Budget that of the evaluation, that was
	// exceeded; both are zero when the context ended (Cause).
	Limit, Budget uint64
	Cause         error
}

func (e *LimitError) Error() string {
	switch {
	case e.Limit > 0:
		return fmt.Sprintf("CEL cost limit of %d exceeded: with this instance's input the expression costs too much to evaluate", e.Limit)
	case e.Budget > 0:
		return fmt.Sprintf("CEL cost budget of %d for one evaluation of the instance spent", e.Budget)
	default:
		return fmt.Sprintf("CEL evaluation stopped: %v", e.Cause)
	}
}

func (e *LimitError) Is(target error) bool { return target == ErrCELLimit }

// ByCost says the evaluation was stopped by what its input costs (an expression's cost limit or
// the evaluation's budget), not by its context: the same input stops it again, at the same
// place, however often it is evaluated.
func (e *LimitError) ByCost() bool { return e.Limit > 0 || e.Budget > 0 }

// StoppedByCost says whether err is, or wraps, a LimitError whose evaluation was stopped by
// what its input costs (LimitError.ByCost).
func StoppedByCost(err error) bool {
	var limit *LimitError
	return errors.As(err, &limit) && limit.ByCost()
}

// limitedPrograms compiles every expression of g with the cost limit and the interrupt check.
func limitedPrograms(g *graph.Graph, costLimit uint64) (map[*krocel.Expression]cel.Program, error) {
	identifiers := []string{graph.SchemaVarName, graph.EachVarName}
	for id, n := range g.Nodes {
		identifiers = append(identifiers, id)
		for _, d := range n.ForEach {
			identifiers = append(identifiers, d.Name)
		}
	}
	slices.Sort(identifiers)
	env, err := krocel.DefaultEnvironment(krocel.WithResourceIDs(slices.Compact(identifiers)))
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	out := map[*krocel.Expression]cel.Program{}
	for _, n := range append(nodesOf(g), g.Instance) {
		for _, expr := range expressionsOf(n) {
			if _, done := out[expr]; done || expr == nil {
				continue
			}
			ast, issues := env.Compile(expr.Original)
			if issues != nil && issues.Err() != nil {
				return nil, fmt.Errorf("expression %q: %w", expr.UserExpression(), issues.Err())
			}
			p, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(interruptCheckFrequency))
			if err != nil {
				return nil, fmt.Errorf("expression %q: %w", expr.UserExpression(), err)
			}
			out[expr] = p
		}
	}
	return out, nil
}

// nodesOf are the graph's resource nodes, in no particular order.
func nodesOf(g *graph.Graph) []*graph.Node {
	out := make([]*graph.Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		out = append(out, n)
	}
	return out
}

// expressionsOf are every expression of a node, wherever kro keeps them.
func expressionsOf(n *graph.Node) []*krocel.Expression {
	out := slices.Concat(n.IncludeWhen, n.ReadyWhen, n.Conditions)
	for _, d := range n.ForEach {
		out = append(out, d.Expression)
	}
	for _, v := range n.Variables {
		out = append(out, v.Expression)
	}
	return out
}

// limiter is one evaluation's: its context, and the cost its expressions have spent.
type limiter struct {
	ctx      context.Context
	programs map[*krocel.Expression]cel.Program
	limit    uint64
	budget   uint64

	mu      sync.Mutex
	spent   uint64
	stopped error
}

// graph is a copy of g whose expressions evaluate the limited programs under the limiter; g is
// shared by every evaluation and not modified. kro's runtime copies the nodes again.
func (l *limiter) graph(g *graph.Graph) *graph.Graph {
	cp := *g
	cp.Nodes = make(map[string]*graph.Node, len(g.Nodes))
	for id, n := range g.Nodes {
		cp.Nodes[id] = l.node(n)
	}
	cp.Resources = cp.Nodes
	cp.Instance = l.node(g.Instance)
	return &cp
}

func (l *limiter) node(n *graph.Node) *graph.Node {
	if n == nil {
		return nil
	}
	cp := *n
	cp.IncludeWhen, cp.ReadyWhen, cp.Conditions = l.expressions(n.IncludeWhen), l.expressions(n.ReadyWhen), l.expressions(n.Conditions)
	cp.ForEach = slices.Clone(n.ForEach)
	for i := range cp.ForEach {
		cp.ForEach[i].Expression = l.expression(cp.ForEach[i].Expression)
	}
	cp.Variables = make([]*variable.ResourceField, len(n.Variables))
	for i, v := range n.Variables {
		field := *v
		field.Expression = l.expression(v.Expression)
		cp.Variables[i] = &field
	}
	if n.Variables == nil {
		cp.Variables = nil
	}
	return &cp
}

func (l *limiter) expressions(in []*krocel.Expression) []*krocel.Expression {
	if in == nil {
		return nil
	}
	out := make([]*krocel.Expression, len(in))
	for i, e := range in {
		out[i] = l.expression(e)
	}
	return out
}

func (l *limiter) expression(e *krocel.Expression) *krocel.Expression {
	if e == nil {
		return nil
	}
	cp := *e
	cp.Program = &limitedProgram{Program: l.programs[e], limiter: l}
	return &cp
}

// err is why the evaluation was stopped, if it was.
func (l *limiter) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// limitedProgram is a cel.Program evaluating a limited program with its limiter's context (kro
// calls Eval only).
type limitedProgram struct {
	cel.Program
	limiter *limiter
}

var _ cel.Program = (*limitedProgram)(nil)

// Eval is what kro calls: it evaluates under the evaluation's context.
func (p *limitedProgram) Eval(input any) (ref.Val, *cel.EvalDetails, error) {
	return p.ContextEval(p.limiter.ctx, input)
}

// ContextEval evaluates unless the evaluation was stopped, its budget is spent or ctx ended, and
// stops it when the expression hits a limit: every later expression then fails at once.
func (p *limitedProgram) ContextEval(ctx context.Context, input any) (ref.Val, *cel.EvalDetails, error) {
	l := p.limiter
	l.mu.Lock()
	stopped := l.stopped
	switch {
	case stopped != nil:
	case l.spent >= l.budget:
		stopped = &LimitError{Budget: l.budget}
	case ctx.Err() != nil:
		stopped = &LimitError{Cause: context.Cause(ctx)}
	}
	l.stopped = stopped
	l.mu.Unlock()
	if stopped != nil {
		return nil, nil, stopped
	}
	out, details, err := p.Program.ContextEval(ctx, input)
	var cancelled interpreter.EvalCancelledError
	switch {
	case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
		stopped = &LimitError{Limit: l.limit}
	case err != nil && (errors.Is(err, interpreter.InterruptError{}) || errors.As(err, &cancelled)):
		stopped = &LimitError{Cause: context.Cause(ctx)}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if details != nil && details.ActualCost() != nil {
		l.spent += *details.ActualCost()
	}
	if stopped != nil {
		if l.stopped == nil {
			l.stopped = stopped
		}
		return nil, details, stopped
	}
	return out, details, err
}
