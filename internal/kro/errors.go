package kro

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
)

// ErrSchemaNotFound is matched (errors.Is) by a compile that failed because the target cluster
// does not serve a kind the graph uses.
var ErrSchemaNotFound = resolver.ErrSchemaNotFound

// SchemaNotFoundError says that a resource of the graph has a kind the target cluster does not
// serve (no CRD there, or another version of it). It is the target's fault, not the graph's:
// the same graph may compile on the next cluster, or on this one once the CRD is installed.
type SchemaNotFoundError struct {
	// ResourceID is the RGD resource whose kind is missing.
	ResourceID string
	Kind       schema.GroupVersionKind
	// Err is kro's error.
	Err error
}

func (e *SchemaNotFoundError) Error() string {
	return fmt.Sprintf("resource %q: no schema for %s %s on this cluster", e.ResourceID, e.Kind.GroupVersion(), e.Kind.Kind)
}

func (e *SchemaNotFoundError) Unwrap() error { return e.Err }

// InvalidGraphError says that kro rejected the graph against the target's schemas: a CEL
// type error, a field the kind does not have, a cycle, a reserved or duplicate id, a bad
// SimpleSchema. It names the resource in kro's own words; it does not go away by retrying.
type InvalidGraphError struct{ Err error }

func (e *InvalidGraphError) Error() string { return "invalid graph: " + e.Err.Error() }
func (e *InvalidGraphError) Unwrap() error { return e.Err }

// TargetError says that the target's schemas or mappings could not be read (a discovery or
// /openapi/v3 request failed): nothing is known about the graph; retry.
type TargetError struct{ Err error }

func (e *TargetError) Error() string { return "reading the cluster's schemas: " + e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// isMissingKind reports whether a resolver or mapper error means "this cluster does not serve
// that kind".
func isMissingKind(err error) bool {
	return errors.Is(err, resolver.ErrSchemaNotFound) || meta.IsNoMatchError(err)
}
