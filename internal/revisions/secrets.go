package revisions

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// A revision never holds Secret data: revisions live in the owner's namespace, where
// Kubernetes' `view` role reads ControllerRevisions but not Secrets. A Secret is kept without
// its data and stringData, with the Source they came from; when the revision is used (a pin, a
// rollback) they are read there again, and used only if the Secret is then exactly what the
// revision delivered (its render hash, kept with it, matches). Otherwise the revision cannot be
// delivered, and Load says why.

// Source is where a Secret of a revision gets its data back from: a hub Secret, or a document
// of a manifest ConfigMap or Secret.
type Source struct {
	// Kind is Secret or ConfigMap.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Manifest says the Secret is a document of this object's data, found by its kind,
	// namespace and name; otherwise it is this object.
	Manifest bool `json:"manifest,omitempty"`
}

func (s Source) String() string {
	if s.Manifest {
		return fmt.Sprintf("a document of the manifest %s %s/%s", s.Kind, s.Namespace, s.Name)
	}
	return fmt.Sprintf("%s %s/%s on the hub", s.Kind, s.Namespace, s.Name)
}

// ErrSecretNotAsKept says a revision's Secret cannot be delivered again: its source is gone,
// or holds other data than the revision delivered.
var ErrSecretNotAsKept = errors.New("its data is not kept in revisions (they are readable where Secrets are not)")

// secretFields are where a Secret holds values.
var secretFields = []string{"data", "stringData"}

// IsSecret reports whether o is a core Secret.
func IsSecret(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// withoutData returns a copy of a Secret without its values.
func withoutData(o *unstructured.Unstructured) *unstructured.Unstructured {
	out := o.DeepCopy()
	for _, f := range secretFields {
		delete(out.Object, f)
	}
	return out
}

// withData returns the Secret kept without data (kept) with its values read again from src,
// when they are those the revision delivered.
func (s *Store) withData(ctx context.Context, kept *unstructured.Unstructured, src Source) (*unstructured.Unstructured, error) {
	what := fmt.Sprintf("Secret %s/%s", kept.GetNamespace(), kept.GetName())
	if src.Name == "" {
		return nil, fmt.Errorf("%s: %w, and where it came from is not known; pin a newer revision or unpin the cluster", what, ErrSecretNotAsKept)
	}
	values, err := s.readSource(ctx, kept, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; it is read again from %s, which %w; restore it, pin a newer revision or unpin the cluster", what, ErrSecretNotAsKept, src, err)
	}
	out := kept.DeepCopy()
	for f, v := range values {
		out.Object[f] = v
	}
	if h, err := render.Hash(out); err != nil || h != render.HashOf(kept) {
		return nil, fmt.Errorf("%s: %w; it is read again from %s, which now holds other data than this revision delivered; pin a newer revision or unpin the cluster", what, ErrSecretNotAsKept, src)
	}
	return out, nil
}

// errSourceGone is a Source that no longer exists or no longer holds the Secret.
var errSourceGone = errors.New("is gone")

// readSource reads the values of the Secret kept from src: its data and stringData fields.
func (s *Store) readSource(ctx context.Context, kept *unstructured.Unstructured, src Source) (map[string]any, error) {
	key := client.ObjectKey{Namespace: src.Namespace, Name: src.Name}
	if !src.Manifest {
		if src.Kind != "Secret" {
			return nil, fmt.Errorf("is not a Secret")
		}
		hub := &unstructured.Unstructured{}
		hub.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := s.Reader.Get(ctx, key, hub); err != nil {
			return nil, readError(err)
		}
		return valuesOf(hub), nil
	}
	data := map[string]string{}
	switch src.Kind {
	case "ConfigMap":
		cm := &corev1.ConfigMap{}
		if err := s.Reader.Get(ctx, key, cm); err != nil {
			return nil, readError(err)
		}
		data = cm.Data
	case "Secret":
		sec := &corev1.Secret{}
		if err := s.Reader.Get(ctx, key, sec); err != nil {
			return nil, readError(err)
		}
		for k, v := range sec.Data {
			data[k] = string(v)
		}
	default:
		return nil, fmt.Errorf("is of an unknown kind")
	}
	docs, err := render.ParseManifests(src.Kind+" "+src.Name, data)
	if err != nil {
		// The parser's message may quote the document: never repeated.
		return nil, errors.New("no longer parses")
	}
	for _, d := range docs {
		if IsSecret(d) && d.GetName() == kept.GetName() && (d.GetNamespace() == "" || d.GetNamespace() == kept.GetNamespace()) {
			return valuesOf(d), nil
		}
	}
	return nil, fmt.Errorf("no longer holds it")
}

// valuesOf returns the values fields of a Secret.
func valuesOf(o *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for _, f := range secretFields {
		if v, ok := o.Object[f]; ok {
			out[f] = v
		}
	}
	return out
}

func readError(err error) error {
	if apierrors.IsNotFound(err) {
		return errSourceGone
	}
	return fmt.Errorf("cannot be read: %w", err)
}
