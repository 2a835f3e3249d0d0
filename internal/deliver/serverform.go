package deliver

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
)

// What the cluster stores for Flotilla's apply of an object (its server form) is remembered
// by package observe; here the deliverer learns it by a dry run when an object looks drifted.

// recheck is for a live object that differs at paths from what Flotilla applied, compared
// with the desired object because what the cluster stores for it is not known yet: it asks the
// cluster by a dry run, remembers the answer, and returns where the object differs from that.
// A correction also needs the field manager behind the drift (nameManager): it is read during
// the dry run, so that learning the server form costs a correction no time.
func (w *clusterWorker) recheck(ctx context.Context, cl cluster.Cluster, owner pairKey, key string, desired, live *unstructured.Unstructured,
	ignore [][]string, paths []string, nameManager bool) (drifted []string, manager string) {
	if _, ok := w.seen.KnownForm(key, desired); ok {
		return paths, "" // already compared with it
	}
	var wg sync.WaitGroup
	if nameManager {
		wg.Add(1)
		go func() {
			defer wg.Done()
			manager = w.managerOf(ctx, cl, desired, paths)
		}()
	}
	form, err := w.learnForm(ctx, cl, owner, key, desired, keepIgnored(desired, live, ignore), ignore)
	wg.Wait()
	if err != nil {
		ctrllog.FromContext(ctx).V(1).Info("Cannot dry-run an apply to tell drift from the cluster's own changes",
			"object", decide.Describe(desired), "error", SecretError(desired, err).Error())
		return paths, manager
	}
	return drift.Compare(form, live.Object, ignore), manager
}

// learnForm asks the cluster what it would store for desired, by a dry run of toApply
// (desired with the live values of ignored fields), and remembers it.
func (w *clusterWorker) learnForm(ctx context.Context, cl cluster.Cluster, owner pairKey, key string, desired, toApply *unstructured.Unstructured, ignore [][]string) (map[string]any, error) {
	applier, err := w.appliers.get(cl)
	if err != nil {
		return nil, err
	}
	raw, err := applier.wouldStore(ctx, toApply)
	countWrite(w.name, "dry-run", err)
	if err != nil {
		return nil, err
	}
	var stored map[string]any
	if err := utiljson.Unmarshal(raw, &stored); err != nil {
		return nil, err
	}
	return w.seen.LearnForm(owner, key, desired, stored, ignore, w.wanted), nil
}
