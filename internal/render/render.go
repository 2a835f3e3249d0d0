package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// hubOnlyMetadata are metadata fields that describe the hub's copy, not the desired object.
var hubOnlyMetadata = []string{
	"uid", "resourceVersion", "generation", "managedFields", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "selfLink", "generateName",
}

// hubOnlyAnnotations are annotations clients leave on the hub's copy.
var hubOnlyAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"deployment.kubernetes.io/revision",
	// Flotilla's own instructions about a transparent-mode object (its copies would change
	// with them, and a pin would name a revision that differs from the latest by the pin).
	flotillav1.AnnotationConfirmPrune,
	flotillav1.AnnotationRevisionPins,
	flotillav1.AnnotationApprove,
	flotillav1.AnnotationUndo,
}

// Render returns the object desired on a spoke for a hub object: hub-only fields stripped,
// ownership markers added (the owner label and annotation; see Managed), hash stamped. The
// input is not modified.
func Render(hub *unstructured.Unstructured, owner Owner) (*unstructured.Unstructured, error) {
	if hub.GetAPIVersion() == "" || hub.GetKind() == "" || hub.GetName() == "" {
		return nil, fmt.Errorf("object %q has no apiVersion, kind or name", hub.GetName())
	}
	out := hub.DeepCopy()
	dropAllocated(out) // before the UID goes: it tells hub objects from manifest documents
	delete(out.Object, "status")
	for _, f := range hubOnlyMetadata {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	annotations := out.GetAnnotations()
	for _, a := range hubOnlyAnnotations {
		delete(annotations, a)
	}
	delete(annotations, flotillav1.AnnotationHash)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[flotillav1.AnnotationOwner] = owner.String()
	labels := out.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[flotillav1.LabelOwner] = owner.LabelValue()
	out.SetLabels(labels)
	out.SetAnnotations(annotations)
	h, err := Hash(out)
	if err != nil {
		return nil, err
	}
	annotations[flotillav1.AnnotationHash] = h
	out.SetAnnotations(annotations)
	return out, nil
}

// Rehash stamps an already rendered object, changed afterwards (a per-cluster replica count,
// an override), with the hash of its new content. It modifies and returns obj.
func Rehash(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h, err := Hash(obj)
	if err != nil {
		return nil, err
	}
	annotations := obj.GetAnnotations()
	annotations[flotillav1.AnnotationHash] = h
	obj.SetAnnotations(annotations)
	return obj, nil
}

// Hash is a hash of an object's canonical JSON (encoding/json sorts map keys), without its
// hash annotation.
func Hash(obj *unstructured.Unstructured) (string, error) {
	c := obj.DeepCopy()
	if a := c.GetAnnotations(); a != nil {
		delete(a, flotillav1.AnnotationHash)
		if len(a) == 0 {
			a = nil
		}
		c.SetAnnotations(a)
	}
	data, err := json.Marshal(c.Object)
	if err != nil {
		return "", fmt.Errorf("hash %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:16], nil
}

// Revision is a hash of a whole set of rendered objects: it changes when any object does.
func Revision(objs []*unstructured.Unstructured) string {
	hashes := make([]string, 0, len(objs))
	for _, o := range objs {
		hashes = append(hashes, Key(o)+"="+HashOf(o))
	}
	return revisionOf(hashes)
}

// revisionOf is Revision of objects given as key=hash strings; it sorts them.
func revisionOf(hashes []string) string {
	sort.Strings(hashes)
	sum := sha256.New()
	for _, h := range hashes {
		sum.Write([]byte(h))
		sum.Write([]byte{0})
	}
	return hex.EncodeToString(sum.Sum(nil))[:16]
}

// Key identifies an object on a cluster: group/Kind/namespace/name.
func Key(o *unstructured.Unstructured) string {
	return KeyWith(o.GroupVersionKind(), o)
}

// KeyWith is Key of an object whose kind the caller has read already (o.GroupVersionKind()).
func KeyWith(gvk schema.GroupVersionKind, o *unstructured.Unstructured) string {
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// SplitKey is the inverse of Key: the group, kind, namespace and name a key names.
func SplitKey(key string) (group, kind, namespace, name string, ok bool) {
	parts := strings.SplitN(key, "/", 4)
	if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
		return "", "", "", "", false
	}
	return parts[0], parts[1], parts[2], parts[3], true
}

// HashOf reads the hash Render stamped on an object, without copying its annotations; "" when
// it has none.
func HashOf(o *unstructured.Unstructured) string {
	h, _, _ := unstructured.NestedString(o.Object, "metadata", "annotations", flotillav1.AnnotationHash)
	return h
}
