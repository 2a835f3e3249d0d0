package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
	"github.com/flotilla-dev/flotilla/internal/serverside"
)

const (
	// fieldManager owns what importers write on the hub: imported Clusters and their
	// credentials Secrets.
	fieldManager = "flotilla-import"
	// kubeconfigKey is the key of the kubeconfig in a credentials Secret an importer writes.
	kubeconfigKey = "kubeconfig"
	// annotationKubeconfigHash on a credentials Secret is the hash of the kubeconfig in it.
	annotationKubeconfigHash = "flotilla.dev/kubeconfig-hash"
	// annotationImportHash on an imported Cluster is the hash of what the importer last
	// applied: equal means there is nothing to write. Not an API contract.
	annotationImportHash = "flotilla.dev/import-hash"
	// sourceRefIndex indexes imported Clusters by source and source object.
	sourceRefIndex = "flotilla.dev/source-ref"
	// unidentifiedRetry is how soon an import waits to try again when the spoke could not
	// be identified (unreachable, or credentials it rejects).
	unidentifiedRetry    = 15 * time.Second
	maxUnidentifiedRetry = 5 * time.Minute
)

// Reasons of the Events importers record on source objects and on Clusters.
const (
	ReasonImported          = "Imported"
	ReasonKubeconfigRefused = "KubeconfigRefused"
	ReasonUnidentified      = "Unidentified"
	ReasonDuplicateCluster  = "DuplicateCluster"
	ReasonNameTaken         = "NameTaken"
	ReasonNoCredentials     = "NoCredentials"
	ReasonUnsupported       = "Unsupported"
)

// clusterImport is what a source says about one cluster.
type clusterImport struct {
	source     string        // flotilla.dev/source value
	ref        string        // <namespace>/<name> of the source object
	object     client.Object // the source object, which Events are recorded on (never written)
	name       string        // the Cluster's name
	labels     map[string]string
	taints     []flotillav1.ClusterTaint
	kubeconfig []byte
}

// importer writes the Clusters that every source asks for, and their credentials. One importer
// serves every source, so that name and identity checks and the writes they allow happen one
// at a time.
type importer struct {
	hub       client.Client // cached; Secrets only as metadata
	reader    client.Reader // uncached: credentials, and the truth before a write
	events    record.EventRecorder
	ids       *identifier
	namespace string // where the credentials Secrets go

	mu sync.Mutex

	retriesMu sync.Mutex
	retries   map[string]retry // source objects whose spoke could not be identified

	losersMu sync.Mutex
	losers   map[string]map[string]bool // spoke identity → source keys not imported because another Cluster has it
}

// retry remembers the failures to identify one source object's spoke.
type retry struct {
	attempts int
	reason   string
}

// sourceKey is the value of sourceRefIndex.
func sourceKey(source, ref string) string { return source + " " + ref }

// credentialsName is the name of the Secret holding an imported Cluster's kubeconfig.
func credentialsName(cluster string) string { return cluster + "-imported-kubeconfig" }

// importPlan is what apply must do.
type importPlan struct {
	blocked  string              // non-empty: the import may not proceed, and why
	winner   *flotillav1.Cluster // set: another Cluster has this spoke; remove ours
	secret   bool                // write the credentials Secret
	cluster  bool                // apply the Cluster
	creating bool                // the Cluster does not exist yet
	stale    []flotillav1.Cluster
}

// readerFor returns the cache or the API server.
func (i *importer) readerFor(cached bool) client.Reader {
	if cached {
		return i.hub
	}
	return i.reader
}

// unidentified records a failure to identify a source object's spoke and returns when to
// try again (15s, doubling up to 5m) and whether the reason is new (worth an Event).
func (i *importer) unidentified(ref, reason string) (time.Duration, bool) {
	i.retriesMu.Lock()
	defer i.retriesMu.Unlock()
	if i.retries == nil {
		i.retries = map[string]retry{}
	}
	r := i.retries[ref]
	first := r.reason != reason
	r.attempts++
	r.reason = reason
	i.retries[ref] = r
	return min(unidentifiedRetry<<min(r.attempts-1, 5), maxUnidentifiedRetry), first
}

// lost remembers a source object that yielded a spoke to another Cluster, so that it is looked
// at again when that Cluster goes.
func (i *importer) lost(id, source, ref string) {
	i.losersMu.Lock()
	defer i.losersMu.Unlock()
	if i.losers == nil {
		i.losers = map[string]map[string]bool{}
	}
	if i.losers[id] == nil {
		i.losers[id] = map[string]bool{}
	}
	i.losers[id][sourceKey(source, ref)] = true
}

// losersOf returns (and forgets) the references of one source's objects that yielded the
// spoke with this identity.
func (i *importer) losersOf(id, source string) []string {
	i.losersMu.Lock()
	defer i.losersMu.Unlock()
	var refs []string
	for key := range i.losers[id] {
		if s, ref, _ := strings.Cut(key, " "); s == source {
			refs = append(refs, ref)
			delete(i.losers[id], key)
		}
	}
	if len(i.losers[id]) == 0 {
		delete(i.losers, id)
	}
	return refs
}

// identified forgets the failures of a source object.
func (i *importer) identified(ref string) {
	i.retriesMu.Lock()
	delete(i.retries, ref)
	i.retriesMu.Unlock()
}

func (p importPlan) empty() bool {
	return p.blocked == "" && p.winner == nil && !p.secret && !p.cluster && len(p.stale) == 0
}

// apply makes the hub hold the Cluster imp describes, if it may: the kubeconfig goes through
// the hardened loader and the spoke is identified before the inventory ever sees them, so a
// spoke registered twice is never engaged twice. A kubeconfig the loader refuses is imported
// as it is, so that the Cluster carries the inventory's clear condition and nothing engages.
func (i *importer) apply(ctx context.Context, imp clusterImport) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", imp.name)
	id := ""
	if cfg, err := kubeconfig.Parse(imp.kubeconfig); err != nil {
		i.events.Eventf(imp.object, corev1.EventTypeWarning, ReasonKubeconfigRefused,
			"Cluster %s is imported but cannot connect: %s", imp.name, shorten(err.Error()))
	} else if id, err = i.ids.identify(ctx, imp.kubeconfig, cfg); err != nil {
		retry, first := i.unidentified(sourceKey(imp.source, imp.ref), err.Error())
		if first {
			i.events.Eventf(imp.object, corev1.EventTypeWarning, ReasonUnidentified,
				"not imported yet: a spoke is imported once it is identified by the UID of its kube-system namespace, and %s; retrying", err)
			log.Info("Cannot identify the spoke yet; retrying", "reason", err.Error(), "after", retry)
		}
		return reconcile.Result{RequeueAfter: retry}, nil
	}
	i.identified(sourceKey(imp.source, imp.ref))
	want := i.desiredCluster(imp, id)
	plan, err := i.plan(ctx, true, imp, id, want)
	if err != nil || plan.empty() {
		return reconcile.Result{}, err
	}
	// Something is to be written: decide again on what the hub says now, not on the cache.
	i.mu.Lock()
	defer i.mu.Unlock()
	if plan, err = i.plan(ctx, false, imp, id, want); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, i.execute(ctx, imp, want, plan)
}

// plan decides what apply must write, from the cache or (cached false) from the API server.
func (i *importer) plan(ctx context.Context, cached bool, imp clusterImport, id string, want *unstructured.Unstructured) (importPlan, error) {
	var plan importPlan
	r := i.readerFor(cached)
	var existing *flotillav1.Cluster
	c := &flotillav1.Cluster{}
	switch err := r.Get(ctx, client.ObjectKey{Name: imp.name}, c); {
	case apierrors.IsNotFound(err):
		plan.creating = true
	case err != nil:
		return plan, fmt.Errorf("read cluster %s: %w", imp.name, err)
	case c.Labels[flotillav1.LabelSource] != imp.source || c.Annotations[flotillav1.AnnotationSourceRef] != imp.ref:
		plan.blocked = fmt.Sprintf("a Cluster named %s already exists and was not imported from this %s object; rename one of them", imp.name, imp.source)
		return plan, nil
	default:
		existing = c
	}
	mine, err := i.importedFrom(ctx, cached, imp.source, imp.ref)
	if err != nil {
		return plan, err
	}
	for _, m := range mine {
		if m.Name != imp.name {
			plan.stale = append(plan.stale, m)
		}
	}
	if id != "" {
		var same flotillav1.ClusterList
		if err := r.List(ctx, &same, client.MatchingLabels{flotillav1.LabelClusterID: id}); err != nil {
			return plan, fmt.Errorf("list clusters with identity %s: %w", id, err)
		}
		for k := range same.Items {
			other := &same.Items[k]
			if other.Labels[flotillav1.LabelSource] == imp.source && other.Annotations[flotillav1.AnnotationSourceRef] == imp.ref {
				continue
			}
			if wins(other, existing) && (plan.winner == nil || wins(other, plan.winner)) {
				plan.winner = other
			}
		}
		if plan.winner != nil {
			plan.stale = mine
			return plan, nil
		}
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	switch err := r.Get(ctx, client.ObjectKey{Namespace: i.namespace, Name: credentialsName(imp.name)}, secret); {
	case apierrors.IsNotFound(err):
		plan.secret = true
	case err != nil:
		return plan, fmt.Errorf("read secret %s/%s: %w", i.namespace, credentialsName(imp.name), err)
	case secret.Labels[flotillav1.LabelSource] != imp.source || secret.Annotations[flotillav1.AnnotationSourceRef] != imp.ref:
		plan.blocked = fmt.Sprintf("Secret %s/%s exists and was not written for this import; Flotilla never overwrites it", i.namespace, secret.Name)
		return plan, nil
	default:
		plan.secret = secret.Annotations[annotationKubeconfigHash] != hashOf(imp.kubeconfig)
	}
	plan.cluster = existing == nil || !upToDate(existing, want)
	return plan, nil
}

// wins tells whether other keeps a spoke that ours (nil: not created yet) also names: a joined
// Cluster always does, otherwise the older one.
func wins(other, ours *flotillav1.Cluster) bool {
	if ours == nil || other.Labels[flotillav1.LabelSource] == "" {
		return true
	}
	if ours.Labels[flotillav1.LabelSource] == "" {
		return false
	}
	if !other.CreationTimestamp.Equal(&ours.CreationTimestamp) {
		return other.CreationTimestamp.Before(&ours.CreationTimestamp)
	}
	return other.Name < ours.Name
}

func (i *importer) execute(ctx context.Context, imp clusterImport, want *unstructured.Unstructured, plan importPlan) error {
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", imp.name)
	if plan.blocked != "" {
		i.events.Event(imp.object, corev1.EventTypeWarning, ReasonNameTaken, "not imported: "+plan.blocked)
		return nil
	}
	if plan.winner != nil {
		what := "joined with `flotilla join`"
		if s := plan.winner.Labels[flotillav1.LabelSource]; s != "" {
			what = "imported from " + s + " " + plan.winner.Annotations[flotillav1.AnnotationSourceRef]
		}
		msg := fmt.Sprintf("not imported: this is the API server of Cluster %s (%s; same kube-system UID %s); one spoke is engaged once",
			plan.winner.Name, what, plan.winner.Labels[flotillav1.LabelClusterID])
		i.events.Event(imp.object, corev1.EventTypeWarning, ReasonDuplicateCluster, msg)
		i.events.Eventf(plan.winner, corev1.EventTypeWarning, ReasonDuplicateCluster,
			"%s %s names the same spoke; it is not imported", imp.source, imp.ref)
		log.Info("Spoke already registered; not importing it twice", "registeredAs", plan.winner.Name)
		i.lost(plan.winner.Labels[flotillav1.LabelClusterID], imp.source, imp.ref)
		return i.delete(ctx, plan.stale)
	}
	// A Cluster of this source object under another name goes first: one spoke, one name.
	if err := i.delete(ctx, plan.stale); err != nil {
		return err
	}
	if plan.secret {
		if err := i.writeCredentials(ctx, imp); err != nil {
			return err
		}
	}
	if plan.cluster {
		if err := i.hub.Apply(ctx, client.ApplyConfigurationFromUnstructured(want), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil { // an unstructured apply body, so that status is never part of it
			return fmt.Errorf("apply cluster %s: %w", imp.name, err)
		}
		verb := "updated"
		if plan.creating {
			verb = "imported as"
		}
		i.events.Eventf(imp.object, corev1.EventTypeNormal, ReasonImported, "%s Cluster %s", verb, imp.name)
		log.Info("Imported cluster", "source", imp.source, "ref", imp.ref, "created", plan.creating)
	} else if plan.secret {
		i.events.Eventf(imp.object, corev1.EventTypeNormal, ReasonImported, "credentials of Cluster %s updated", imp.name)
		log.Info("Imported credentials changed", "source", imp.source, "ref", imp.ref)
	}
	return nil
}

// desiredCluster is the apply body of an imported Cluster.
func (i *importer) desiredCluster(imp clusterImport, id string) *unstructured.Unstructured {
	labels := map[string]any{flotillav1.LabelSource: imp.source}
	for k, v := range imp.labels {
		labels[k] = v
	}
	if id != "" {
		labels[flotillav1.LabelClusterID] = id
	}
	spec := map[string]any{"credentials": map[string]any{
		"namespace": i.namespace, "name": credentialsName(imp.name), "key": kubeconfigKey,
	}}
	if len(imp.taints) > 0 {
		taints := make([]any, 0, len(imp.taints))
		for _, t := range imp.taints {
			m := map[string]any{"key": t.Key, "effect": string(t.Effect)}
			if t.Value != "" {
				m["value"] = t.Value
			}
			taints = append(taints, m)
		}
		spec["taints"] = taints
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": flotillav1.GroupVersion.String(),
		"kind":       "Cluster",
		"metadata": map[string]any{
			"name":        imp.name,
			"labels":      labels,
			"annotations": map[string]any{flotillav1.AnnotationSourceRef: imp.ref},
		},
		"spec": spec,
	}}
	body, _ := json.Marshal(u.Object) // maps marshal with sorted keys: a stable hash
	u.SetAnnotations(map[string]string{flotillav1.AnnotationSourceRef: imp.ref, annotationImportHash: hashOf(body)[:16]})
	return u
}

// upToDate tells whether an existing Cluster already has what the importer would apply.
func upToDate(c *flotillav1.Cluster, want *unstructured.Unstructured) bool {
	if c.Annotations[annotationImportHash] != want.GetAnnotations()[annotationImportHash] {
		return false
	}
	for k, v := range want.GetLabels() {
		if c.Labels[k] != v {
			return false
		}
	}
	creds, _, _ := unstructured.NestedStringMap(want.Object, "spec", "credentials")
	ref := c.Spec.Credentials
	if ref.Namespace != creds["namespace"] || ref.Name != creds["name"] || ref.Key != creds["key"] {
		return false
	}
	taints, _, _ := unstructured.NestedSlice(want.Object, "spec", "taints")
	for _, t := range taints {
		m := t.(map[string]any)
		value, _ := m["value"].(string)
		if !slices.Contains(c.Spec.Taints, flotillav1.ClusterTaint{Key: m["key"].(string), Value: value, Effect: flotillav1.TaintEffect(m["effect"].(string))}) {
			return false
		}
	}
	return true
}

// writeCredentials stores the kubeconfig where the imported Cluster's spec.credentials points.
func (i *importer) writeCredentials(ctx context.Context, imp clusterImport) error {
	secret := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      credentialsName(imp.name),
			Namespace: i.namespace,
			Labels:    map[string]string{flotillav1.LabelSource: imp.source, flotillav1.LabelCluster: imp.name},
			Annotations: map[string]string{
				flotillav1.AnnotationSourceRef: imp.ref,
				annotationKubeconfigHash:       hashOf(imp.kubeconfig),
			},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{kubeconfigKey: imp.kubeconfig},
	}
	if err := serverside.Apply(ctx, i.hub, secret, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("write secret %s/%s: %w", i.namespace, secret.Name, err)
	}
	return nil
}

// remove disconnects every Cluster imported from a source object that is gone, or no longer
// names a cluster: the Cluster and its credentials Secret are deleted, which disengages the
// spoke and deletes nothing on it.
func (i *importer) remove(ctx context.Context, source, ref string) error {
	i.identified(sourceKey(source, ref))
	mine, err := i.importedFrom(ctx, true, source, ref)
	if err != nil || len(mine) == 0 {
		return err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if mine, err = i.importedFrom(ctx, false, source, ref); err != nil {
		return err
	}
	for _, c := range mine {
		ctrl.LoggerFrom(ctx).Info("Source of an imported cluster is gone; disconnecting the cluster (nothing on the spoke is deleted)",
			"cluster", c.Name, "source", source, "ref", ref)
	}
	return i.delete(ctx, mine)
}

// importedFrom lists the Clusters imported from one source object.
func (i *importer) importedFrom(ctx context.Context, cached bool, source, ref string) ([]flotillav1.Cluster, error) {
	var list flotillav1.ClusterList
	var err error
	if cached {
		err = i.hub.List(ctx, &list, client.MatchingFields{sourceRefIndex: sourceKey(source, ref)})
	} else {
		err = i.reader.List(ctx, &list, client.MatchingLabels{flotillav1.LabelSource: source})
	}
	if err != nil {
		return nil, fmt.Errorf("list clusters imported from %s %s: %w", source, ref, err)
	}
	var out []flotillav1.Cluster
	for _, c := range list.Items {
		if c.Labels[flotillav1.LabelSource] == source && c.Annotations[flotillav1.AnnotationSourceRef] == ref {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// delete deletes imported Clusters and their credentials Secrets.
func (i *importer) delete(ctx context.Context, clusters []flotillav1.Cluster) error {
	var errs []error
	for _, c := range clusters {
		if err := i.hub.Delete(ctx, &c, client.Preconditions{UID: &c.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete cluster %s: %w", c.Name, err))
			continue
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: i.namespace, Name: credentialsName(c.Name)}}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := i.reader.Get(ctx, client.ObjectKeyFromObject(secret), meta)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if meta.Labels[flotillav1.LabelSource] != c.Labels[flotillav1.LabelSource] || meta.Annotations[flotillav1.AnnotationSourceRef] != c.Annotations[flotillav1.AnnotationSourceRef] {
			continue // not ours
		}
		if err := i.hub.Delete(ctx, secret, client.Preconditions{UID: &meta.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete secret %s/%s: %w", secret.Namespace, secret.Name, err))
		}
	}
	return errors.Join(errs...)
}

func shorten(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
