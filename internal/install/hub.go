package install

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/serverside"
)

// ApplyObjects server-side applies a hub's installation (the objects `flotilla install`
// renders from the chart, in Helm's install order: namespace, RBAC and CRDs before what uses
// them) and waits until each CustomResourceDefinition is Established. Applying the same
// objects again changes nothing. An object annotated flotilla.dev/installed-by=flotilla (kro's
// CRD) is applied only where it is absent or Flotilla installed it: a copy someone else
// installed is left as it is. With dryRun the API server checks every object and persists
// none (the namespace must exist already). progress receives one line per object, as kubectl
// apply prints them.
func ApplyObjects(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, dryRun bool, progress func(string)) error {
	if progress == nil {
		progress = func(string) {}
	}
	opts := []client.ApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}
	suffix := ""
	if dryRun {
		opts = append(opts, client.DryRunAll)
		suffix = " (server dry run)"
	}
	for _, obj := range objs {
		name := objectName(obj)
		if obj.GetAnnotations()[AnnotationInstalledBy] == FieldManager {
			theirs, err := installedByOthers(ctx, c, obj)
			if err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			if theirs {
				progress(name + " kept (installed by someone else)")
				continue
			}
		}
		if err := serverside.Apply(ctx, c, obj.DeepCopy(), opts...); err != nil {
			if dryRun && obj.GetNamespace() != "" && apierrors.IsNotFound(err) {
				return fmt.Errorf("apply %s: %w (a server dry run creates nothing, namespace %s included: create it first, or print the objects with --dry-run=client)", name, err, obj.GetNamespace())
			}
			return fmt.Errorf("apply %s: %w", name, err)
		}
		if obj.GetKind() == "CustomResourceDefinition" && !dryRun {
			if err := waitEstablished(ctx, c, obj.GetName()); err != nil {
				return err
			}
			progress(name + " serverside-applied and established")
			continue
		}
		progress(name + " serverside-applied" + suffix)
	}
	return nil
}

// installedByOthers says whether obj exists on the hub without Flotilla's installed-by mark.
func installedByOthers(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (bool, error) {
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), have)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return have.GetAnnotations()[AnnotationInstalledBy] != FieldManager, nil
}

// objectName names obj as kubectl does: kind.group/name, lower case.
func objectName(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	kind := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	return kind + "/" + obj.GetName()
}
