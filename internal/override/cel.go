package override

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/flotilla-dev/flotilla/internal/drift"
)

// CostLimit bounds the work of one CEL evaluation, in CEL cost units (as Kubernetes counts
// them for validation rules): enough for string building and arithmetic over the object, not
// for loops over large lists.
const CostLimit = 100_000

// celEnv declares the variables an expression sees.
var celEnv = func() *cel.Env {
	env, err := cel.NewEnv(cel.Variable("cluster", cel.DynType), cel.Variable("object", cel.DynType))
	if err != nil {
		panic(err)
	}
	return env
}()

var valueType = reflect.TypeOf(&structpb.Value{})

func celField(pointer, expression string) (func(map[string]any, Cluster) (map[string]any, error), error) {
	if _, err := drift.ParsePointer(pointer); err != nil {
		return nil, fmt.Errorf("cel.path: %w", err)
	}
	ast, iss := celEnv.Compile(expression)
	if iss.Err() != nil {
		return nil, fmt.Errorf("cel.expression does not compile: %w", iss.Err())
	}
	prg, err := celEnv.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("cel.expression: %w", err)
	}
	return func(obj map[string]any, c Cluster) (map[string]any, error) {
		out, _, err := prg.Eval(map[string]any{"cluster": clusterVars(c), "object": obj})
		if err != nil {
			return nil, fmt.Errorf("cel.expression: %w", err)
		}
		native, err := out.ConvertToNative(valueType)
		if err != nil {
			return nil, fmt.Errorf("cel.expression returned %s, which is not a JSON value", out.Type().TypeName())
		}
		value := normalizeNumbers(native.(*structpb.Value).AsInterface())
		if err := setField(obj, pointer, value); err != nil {
			return nil, fmt.Errorf("cel.path: %w", err)
		}
		return obj, nil
	}, nil
}

func clusterVars(c Cluster) map[string]any {
	labels := map[string]any{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	alloc := map[string]any{"cpu": int64(0), "memory": int64(0), "pods": int64(0)}
	for k, v := range c.Allocatable {
		alloc[k] = v
	}
	return map[string]any{"name": c.Name, "labels": labels, "allocatable": alloc}
}
