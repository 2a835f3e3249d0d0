package revisions

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/work"
)

// Work returns what a cluster must run of owner as its Delivery record says (spec.work): the
// objects of the revision it names, with the cluster's changes applied. The result must make
// the digest the record gives, or it is an error: a revision or a record changed under it.
// Secrets come with their data, read again from their sources (Load).
func (s *Store) Work(ctx context.Context, owner render.Owner, w flotillav1.DeliveryWork) ([]*unstructured.Unstructured, error) {
	base, _, err := s.Load(ctx, owner, w.Revision)
	if err != nil {
		return nil, err
	}
	return Resolve(base, w)
}

// Resolve returns what w makes of base, the objects of the revision it names: base with w's
// changes applied, which must make w's digest (Work, for a caller that has loaded the revision
// itself).
func Resolve(base []*unstructured.Unstructured, w flotillav1.DeliveryWork) ([]*unstructured.Unstructured, error) {
	objs, err := work.Apply(base, w.Changes)
	if err != nil {
		return nil, err
	}
	if digest := render.Revision(objs); digest != w.Digest {
		return nil, fmt.Errorf("revision %s with the cluster's changes makes %s, the record says %s", w.Revision, digest, w.Digest)
	}
	return objs, nil
}
