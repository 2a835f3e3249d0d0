package propagation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A selected kind is read through the hub cache, whose informer must list and watch it. A kind
// the hub cannot list and watch never syncs: a read waits for it until its context ends, and
// the informer retries in the background for good. That happens with create-only kinds
// (v1 Binding, TokenReview), APIs served without list or watch, an aggregated API whose server
// is down, and kinds the hub controller's RBAC does not let it list and watch cluster-wide.
// So a kind is checked before it is watched, and every cache read has a deadline: whatever
// one owner selects, the others carry on.

// hubCacheReadTimeout bounds one read of the hub cache in a reconcile. A kind the hub can
// list syncs within seconds; one that has not synced by then holds its owners
// (KindUnavailable), well within the reconcile's own deadline.
const hubCacheReadTimeout = 20 * time.Second

// kindRetry is how soon an owner held by an unavailable kind looks again: what fixes it (an
// aggregated API server back, a grant to the hub controller) raises no event it watches.
const kindRetry = time.Minute

// kindUnavailableError is a selected kind the hub cannot list and watch now. It is not the
// spec's fault and may pass: the owner holds what it delivered and retries.
type kindUnavailableError struct{ msg string }

func (e kindUnavailableError) Error() string { return e.msg }

// kindAccess checks, before the hub cache watches a kind, that the API serves list and watch
// for it (discovery) and that the hub controller may use them cluster-wide (a
// SelfSubjectAccessReview, which every authenticated user may create).
type kindAccess struct {
	discovery discovery.DiscoveryInterface
	reviews   client.Client
}

// check returns nil when the hub cache can hold the mapped kind; an invalidSpecError when it
// never can (the API serves no list or watch for it); a kindUnavailableError when it cannot
// now.
func (k kindAccess) check(ctx context.Context, m *meta.RESTMapping) error {
	gvk := m.GroupVersionKind
	name := kindName(gvk)
	resources, err := k.discovery.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return kindUnavailableError{fmt.Sprintf("%s cannot be watched now: the hub cannot discover %s (%v); its selectors wait until it can",
			name, gvk.GroupVersion(), err)}
	}
	i := slices.IndexFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == m.Resource.Resource })
	if i < 0 {
		return kindUnavailableError{fmt.Sprintf("%s cannot be watched now: the hub's discovery does not list %s", name, m.Resource.Resource)}
	}
	verbs := resources.APIResources[i].Verbs
	if !slices.Contains(verbs, "list") || !slices.Contains(verbs, "watch") {
		return invalidSpecError{fmt.Sprintf("%s cannot be watched (the API serves %s, not list and watch); it cannot be selected",
			name, orNone(verbs))}
	}
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: gvk.Group, Version: gvk.Version, Resource: m.Resource.Resource}}}
		if err := k.reviews.Create(ctx, review); err != nil {
			return kindUnavailableError{fmt.Sprintf("%s cannot be watched now: checking the hub controller's access failed: %v", name, err)}
		}
		if !review.Status.Allowed {
			return kindUnavailableError{fmt.Sprintf("%s cannot be watched: the hub controller may not %s %s cluster-wide; grant it, or stop selecting this kind",
				name, verb, m.Resource.Resource)}
		}
	}
	return nil
}

// kindName names a kind as a selector does: "v1 Binding", "apps/v1 Deployment".
func kindName(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}

func orNone(verbs []string) string {
	if len(verbs) == 0 {
		return "no verb"
	}
	return "only " + strings.Join(verbs, ", ")
}

// readCache runs one read of the hub cache with hubCacheReadTimeout (timeout 0: no deadline
// of its own). A read the deadline cut is reported as the kind's cache not syncing.
func readCache(ctx context.Context, timeout time.Duration, gvk schema.GroupVersionKind, read func(context.Context) error) error {
	if timeout <= 0 {
		return read(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := read(rctx)
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		return kindUnavailableError{fmt.Sprintf("the hub cache of %s did not sync within %s (can the hub list and watch it?); its selectors wait until it does",
			kindName(gvk), timeout)}
	}
	return err
}
