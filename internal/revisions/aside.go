package revisions

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/coalesce"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// saveWorkers is how many owners' revisions are stored at once.
const saveWorkers = 2

// save is a revision to store (see Save).
type save struct {
	owner   ledger.Owner
	hash    string
	objs    []*unstructured.Unstructured
	sources map[string]Source
	keep    map[string]bool
}

// SaveAside is Save done by the store's workers, so that encoding a thousand objects never
// delays the reconcile that rendered them (and with it the owner's next edit). It returns the
// name the revision has once stored; an error NotKept says when an earlier attempt found it
// too large to keep, or sealed (ErrSealed). Saves of one owner coalesce: of a burst of changes, the latest is stored.
func (s *Store) SaveAside(owner ledger.Owner, hash string, objs []*unstructured.Unstructured, sources map[string]Source, keep map[string]bool) (string, error) {
	if r, ok := s.savedRevision(owner.Owner, hash); ok {
		if r.Name == "" {
			return "", fmt.Errorf("%w (found before)", r.notKept)
		}
		return r.Name, nil
	}
	s.saveQueue().Add(owner.Owner, save{owner: owner, hash: hash, objs: objs, sources: sources, keep: keep})
	return name(owner.Owner, hash), nil
}

// Start stores the revisions SaveAside queued until ctx ends (a manager.Runnable).
func (s *Store) Start(ctx context.Context) error {
	return s.saveQueue().Start(ctx)
}

func (s *Store) saveQueue() *coalesce.Queue[render.Owner, save] {
	s.once.Do(func() {
		s.saves = &coalesce.Queue[render.Owner, save]{Name: "revision-saves", Workers: saveWorkers,
			Handle: func(ctx context.Context, _ render.Owner, sv save) error {
				_, err := s.Save(ctx, sv.owner, sv.hash, sv.objs, sv.sources, sv.keep)
				if NotKept(err) {
					return nil // remembered: the owner's next pass reports it
				}
				return err
			}}
	})
	return s.saves
}
