package revisions

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/coalesce"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Revisions are created and pruned by the store alone; they are listed as metadata and read
// one at a time.
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch;create;delete

const (
	// DefaultLimit is how many revisions an owner keeps, pinned ones aside.
	DefaultLimit = 10
	// labelHash holds the revision's hash (render.Revision), to find it without reading data.
	labelHash = "flotilla.dev/revision"
	// compressAbove is the size of the objects' JSON above which it is gzip-compressed.
	compressAbove = 256 << 10
	// maxStored is the largest revision stored: a third of etcd's 1.5 MiB request limit.
	maxStored = 512 << 10
)

// ErrTooLarge says a revision was not stored because it is too large.
var ErrTooLarge = errors.New("too large to keep as a revision")

// ErrSealed says a revision was not stored because it holds documents of a manifest Secret:
// whoever wrote them into a Secret meant them to be read only where Secrets are, and a
// revision is read where they are not (Kubernetes' view role).
var ErrSealed = errors.New("holds documents of a manifest Secret, which revisions (readable where Secrets are not) never keep")

// NotKept reports whether err says a revision was delivered without being kept (ErrTooLarge,
// ErrSealed): the owner delivers without history, and no cluster can be pinned to it.
func NotKept(err error) bool { return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrSealed) }

// Store saves and loads owners' revisions.
type Store struct {
	// Hub writes revisions; Metadata lists them (a metadata-only cache is enough); Reader reads
	// one whole (uncached: their data is never held in the hub cache). Load needs Reader alone:
	// `flotilla plan` loads pinned revisions with a Store holding only the CLI's hub client.
	Hub      client.Client
	Metadata client.Reader
	Reader   client.Reader
	// Limit is how many revisions an owner keeps (0: DefaultLimit).
	Limit int

	mu     sync.Mutex
	loaded map[render.Owner]map[string]decoded // revisions read back, by owner and name (immutable)
	saved  map[render.Owner]Revision           // each owner's newest revision, as last saved
	saves  *coalesce.Queue[render.Owner, save] // revisions to store aside (aside.go)
	once   sync.Once
}

// Revision is a kept revision, as listed.
type Revision struct {
	Name   string
	Number int64
	Hash   string
	// notKept is why a revision remembered as saved was not stored (Name is empty then).
	notKept error
}

// payload is a revision's data: the objects, or their gzip-compressed JSON.
type payload struct {
	Objects []json.RawMessage `json:"objects,omitempty"`
	Gzip    []byte            `json:"gzip,omitempty"`
	// Secrets are where the Secrets among Objects, kept without their values, get them back
	// from (secrets.go), by render.Key.
	Secrets map[string]Source `json:"secrets,omitempty"`
}

// decoded is a revision's data as read back: its Secrets still without their values.
type decoded struct {
	objs    []*unstructured.Unstructured
	secrets map[string]Source
	hash    string // the revision's render.Revision (its label)
}

// List returns owner's kept revisions, oldest first.
func (s *Store) List(ctx context.Context, owner render.Owner) ([]Revision, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ControllerRevisionList"))
	if err := s.Metadata.List(ctx, list, client.InNamespace(ledger.NamespaceOf(owner)), client.MatchingLabels{flotillav1.LabelOwner: owner.LabelValue()}); err != nil {
		return nil, fmt.Errorf("list the revisions of %s: %w", owner, err)
	}
	out := make([]Revision, 0, len(list.Items))
	for _, m := range list.Items {
		n, _ := strconv.ParseInt(m.Annotations[annotationNumber], 10, 64)
		out = append(out, Revision{Name: m.Name, Number: n, Hash: m.Labels[labelHash]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// annotationNumber holds a revision's number as well as .revision, for metadata-only listing.
const annotationNumber = "flotilla.dev/revision-number"

// Save stores objs as owner's revision hash unless it is kept already, prunes the history
// beyond the limit (never a revision in keep), and returns the revision's name. A Secret
// among objs is kept without its values, with where they came from: sources, by render.Key
// (one with no source cannot be delivered again from the revision).
func (s *Store) Save(ctx context.Context, owner ledger.Owner, hash string, objs []*unstructured.Unstructured, sources map[string]Source, keep map[string]bool) (string, error) {
	if r, ok := s.savedRevision(owner.Owner, hash); ok {
		if r.Name == "" {
			return "", fmt.Errorf("%w (found before)", r.notKept)
		}
		return r.Name, nil
	}
	kept, err := s.List(ctx, owner.Owner)
	if err != nil {
		return "", err
	}
	for _, r := range kept {
		if r.Hash == hash {
			if last := kept[len(kept)-1]; last.Name != r.Name {
				// The owner is back to an older revision's content: that revision becomes the
				// newest again, numbered after the others (as a Deployment's ReplicaSet is on a
				// rollback), so that history, undo and a rollout's watch see it as the latest.
				if err := s.renumber(ctx, owner.Owner, r.Name, last.Number+1); err != nil {
					return "", err
				}
			}
			s.rememberSaved(owner.Owner, hash, r.Name)
			return r.Name, nil
		}
	}
	data, err := encode(objs, sources)
	if NotKept(err) {
		s.rememberNotKept(owner.Owner, hash, err) // not encoded again while the owner is unchanged
	}
	if err != nil {
		return "", err
	}
	var number int64 = 1
	if len(kept) > 0 {
		number = kept[len(kept)-1].Number + 1
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name(owner.Owner, hash), Namespace: ledger.NamespaceOf(owner.Owner),
			Labels:      map[string]string{flotillav1.LabelOwner: owner.LabelValue(), labelHash: hash},
			Annotations: map[string]string{annotationNumber: strconv.FormatInt(number, 10), flotillav1.AnnotationOwner: owner.String()},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
	if owner.UID != "" {
		cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: owner.APIVersion, Kind: owner.ObjectKind, Name: owner.Name, UID: owner.UID}}
	}
	if err := s.Hub.Create(ctx, cr); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("store revision %d of %s: %w", number, owner, err)
	}
	s.rememberSaved(owner.Owner, hash, cr.Name)
	return cr.Name, s.prune(ctx, append(kept, Revision{Name: cr.Name, Number: number, Hash: hash}), owner.Owner, keep)
}

// renumber gives owner's kept revision name the number n.
func (s *Store) renumber(ctx context.Context, owner render.Owner, name string, n int64) error {
	cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ledger.NamespaceOf(owner), Name: name}}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}},"revision":%d}`, annotationNumber, strconv.FormatInt(n, 10), n)
	if err := s.Hub.Patch(ctx, cr, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("number revision %s of %s %d again: %w", name, owner, n, err)
	}
	return nil
}

// prune deletes the oldest revisions beyond the limit, except those in keep.
func (s *Store) prune(ctx context.Context, kept []Revision, owner render.Owner, keep map[string]bool) error {
	limit := s.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	excess := len(kept) - limit
	for _, r := range kept {
		if excess <= 0 {
			break
		}
		if keep[r.Name] {
			continue
		}
		cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: ledger.NamespaceOf(owner)}}
		if err := client.IgnoreNotFound(s.Hub.Delete(ctx, cr)); err != nil {
			return fmt.Errorf("prune revision %s of %s: %w", r.Name, owner, err)
		}
		excess--
	}
	return nil
}

// Load returns the objects of owner's kept revision name, and its hash. Its Secrets are read
// again from their sources; an error (ErrSecretNotAsKept) when one no longer holds what the
// revision delivered. A revision is read from the hub once: revisions never change (a
// name is its content's), and one a pin or a rollout holds clusters at is kept.
func (s *Store) Load(ctx context.Context, owner render.Owner, name string) ([]*unstructured.Unstructured, string, error) {
	s.mu.Lock()
	d, cached := s.loaded[owner][name]
	s.mu.Unlock()
	if cached {
		return s.withSecrets(ctx, owner, name, d)
	}
	key := client.ObjectKey{Namespace: ledger.NamespaceOf(owner), Name: name}
	cr := &appsv1.ControllerRevision{}
	if err := s.Reader.Get(ctx, key, cr); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", fmt.Errorf("revision %s of %s is not kept (any more); pin a kept one (kubectl get controllerrevisions -n %s -l %s=%s) or unpin the cluster",
				name, owner, key.Namespace, flotillav1.LabelOwner, owner.LabelValue())
		}
		return nil, "", fmt.Errorf("read revision %s of %s: %w", name, owner, err)
	}
	if cr.Labels[flotillav1.LabelOwner] != owner.LabelValue() {
		return nil, "", fmt.Errorf("revision %s is not one of %s", name, owner)
	}
	d, err := decode(cr.Data.Raw)
	if err != nil {
		return nil, "", fmt.Errorf("revision %s of %s: %w", name, owner, err)
	}
	d.hash = cr.Labels[labelHash]
	s.mu.Lock()
	if s.loaded == nil {
		s.loaded = map[render.Owner]map[string]decoded{}
	}
	if s.loaded[owner] == nil {
		s.loaded[owner] = map[string]decoded{}
	}
	s.loaded[owner][name] = d
	s.mu.Unlock()
	return s.withSecrets(ctx, owner, name, d)
}

// withSecrets returns a decoded revision's objects with its Secrets' values read again from
// their sources, and its hash.
func (s *Store) withSecrets(ctx context.Context, owner render.Owner, name string, d decoded) ([]*unstructured.Unstructured, string, error) {
	objs, copied := d.objs, false
	for i, o := range d.objs {
		if !IsSecret(o) {
			continue
		}
		if !copied {
			objs, copied = append([]*unstructured.Unstructured(nil), d.objs...), true // the kept ones stay without values
		}
		withData, err := s.withData(ctx, o, d.secrets[render.Key(o)])
		if err != nil {
			return nil, "", fmt.Errorf("revision %s of %s: %w", name, owner, err)
		}
		objs[i] = withData
	}
	return objs, d.hash, nil
}

// Forget drops what the store remembers of owner.
func (s *Store) Forget(owner render.Owner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.loaded, owner)
	delete(s.saved, owner)
	s.saveQueue().Drop(owner)
}

// savedRevision returns owner's newest revision as last saved, if it has this hash; its Name
// is empty when it was too large to keep.
func (s *Store) savedRevision(owner render.Owner, hash string) (Revision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.saved[owner]
	return r, ok && r.Hash == hash
}

// rememberSaved remembers owner's newest revision, so an unchanged owner is not listed again.
func (s *Store) rememberSaved(owner render.Owner, hash, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saved == nil {
		s.saved = map[render.Owner]Revision{}
	}
	s.saved[owner] = Revision{Name: name, Hash: hash}
}

// rememberNotKept remembers that owner's revision hash is delivered without being kept, and why.
func (s *Store) rememberNotKept(owner render.Owner, hash string, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saved == nil {
		s.saved = map[render.Owner]Revision{}
	}
	s.saved[owner] = Revision{Hash: hash, notKept: why}
}

// Name is the name the revision hash of owner has, or will have once saved.
func Name(owner render.Owner, hash string) string { return name(owner, hash) }

// name is a revision's name: the owner's kind and name, and the hash; the owner's label value
// instead when that is not a valid name.
func name(owner render.Owner, hash string) string {
	if n := namePrefix(owner) + hash; len(validation.IsDNS1123Subdomain(n)) == 0 {
		return n
	}
	return owner.LabelValue() + "." + hash
}

func namePrefix(owner render.Owner) string {
	return strings.ToLower(owner.Kind) + "." + owner.Name + "."
}

// encode writes objects as a revision's data, Secrets without their values (secrets.go).
func encode(objs []*unstructured.Unstructured, sources map[string]Source) ([]byte, error) {
	p := payload{Objects: make([]json.RawMessage, 0, len(objs))}
	for _, o := range objs {
		if src := sources[render.Key(o)]; src.Manifest && src.Kind == "Secret" && !IsSecret(o) {
			return nil, fmt.Errorf("%s %s/%s, a document of %s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), src, ErrSealed)
		}
		if IsSecret(o) {
			if p.Secrets == nil {
				p.Secrets = map[string]Source{}
			}
			p.Secrets[render.Key(o)] = sources[render.Key(o)]
			o = withoutData(o)
		}
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		p.Objects = append(p.Objects, raw)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	if len(raw) <= compressAbove {
		return raw, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > maxStored {
		return nil, fmt.Errorf("%d objects, %d bytes compressed: %w", len(objs), buf.Len(), ErrTooLarge)
	}
	return json.Marshal(payload{Gzip: buf.Bytes()})
}

// decode reads a revision's data.
func decode(data []byte) (decoded, error) {
	var p payload
	if err := json.Unmarshal(data, &p); err != nil {
		return decoded{}, err
	}
	if len(p.Gzip) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(p.Gzip))
		if err != nil {
			return decoded{}, err
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return decoded{}, err
		}
		p = payload{}
		if err := json.Unmarshal(raw, &p); err != nil {
			return decoded{}, err
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(p.Objects))
	for _, raw := range p.Objects {
		// apimachinery's JSON keeps integers int64, as unstructured objects need.
		o := map[string]any{}
		if err := utiljson.Unmarshal(raw, &o); err != nil {
			return decoded{}, err
		}
		out = append(out, &unstructured.Unstructured{Object: o})
	}
	return decoded{objs: out, secrets: p.Secrets}, nil
}

// Pinned loads the revisions pins hold clusters at, but latest (the owner's latest revision's
// name), by name, for percluster.Input.Pinned: a revision that cannot be loaded carries why.
func (s *Store) Pinned(ctx context.Context, owner render.Owner, pins []flotillav1.RevisionPin, latest string) map[string]percluster.Pinned {
	out := map[string]percluster.Pinned{}
	for _, p := range pins {
		if _, loaded := out[p.Revision]; loaded || p.Revision == latest {
			continue
		}
		objs, digest, err := s.Load(ctx, owner, p.Revision)
		out[p.Revision] = percluster.Pinned{Revision: percluster.Revision{Name: p.Revision, Digest: digest, Objects: objs}, Err: err}
	}
	return out
}
