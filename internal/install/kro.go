package install

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-dev/flotilla/config/crd"
	"github.com/flotilla-dev/flotilla/internal/serverside"
)

// kroCRDFile is kro's ResourceGraphDefinition CRD, generated from the pinned kro module.
const kroCRDFile = "kro/kro.run_resourcegraphdefinitions.yaml"

// AnnotationInstalledBy marks kro's CRD when Flotilla installed it: Flotilla then keeps it at
// the kro version it is built with. A CRD without it was installed by someone else (kro's own
// chart, typically with a kro controller on the hub) and is left exactly as it is.
const AnnotationInstalledBy = "flotilla.dev/installed-by"

// KroCRD returns kro's ResourceGraphDefinition CRD (kro.run/v1alpha1), as the pinned kro
// release defines it.
func KroCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := crd.Kro.ReadFile(kroCRDFile)
	if err != nil {
		return nil, err
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("embedded %s: %w", kroCRDFile, err)
	}
	c.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return c, nil
}

// applyKroCRD installs kro's RGD CRD on a hub that does not have it, and keeps the one it
// installed up to date; one installed by anyone else is never touched, so Flotilla does not
// fight a kro installation on the hub over its own API.
func applyKroCRD(ctx context.Context, c client.Client, progress func(string)) error {
	want, err := KroCRD()
	if err != nil {
		return err
	}
	have := &apiextensionsv1.CustomResourceDefinition{}
	switch err := c.Get(ctx, client.ObjectKey{Name: want.Name}, have); {
	case err == nil && have.Annotations[AnnotationInstalledBy] != FieldManager:
		if err := waitEstablished(ctx, c, want.Name); err != nil {
			return err
		}
		progress(fmt.Sprintf("customresourcedefinition.apiextensions.k8s.io/%s kept (installed by someone else) and established", want.Name))
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("read CustomResourceDefinition %s: %w", want.Name, err)
	}
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[AnnotationInstalledBy] = FieldManager
	if err := serverside.Apply(ctx, c, want, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply CustomResourceDefinition %s: %w", want.Name, err)
	}
	if err := waitEstablished(ctx, c, want.Name); err != nil {
		return err
	}
	progress(fmt.Sprintf("customresourcedefinition.apiextensions.k8s.io/%s serverside-applied and established", want.Name))
	return nil
}
