package install

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-dev/flotilla/config/crd"
	"github.com/flotilla-dev/flotilla/internal/serverside"
)

// FieldManager is the server-side apply field manager of everything Flotilla writes.
const FieldManager = "flotilla"

// CRDs returns Flotilla's CustomResourceDefinitions.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := crd.Bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			return nil, fmt.Errorf("embedded %s: %w", f, err)
		}
		c.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		out = append(out, c)
	}
	return out, nil
}

// Apply server-side applies every CRD to the hub and waits until each is Established, then
// installs kro's ResourceGraphDefinition CRD unless someone else already did (applyKroCRD),
// then the policy that lets only controllers (the user names the hub controller runs as) write
// Delivery records (DeliveryPolicy). progress receives one line per object; it may be nil.
func Apply(ctx context.Context, cfg *rest.Config, controllers []string, progress func(string)) error {
	if progress == nil {
		progress = func(string) {}
	}
	scheme := Scheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	crds, err := CRDs()
	if err != nil {
		return err
	}
	for _, want := range crds {
		if err := serverside.Apply(ctx, c, want, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply CustomResourceDefinition %s: %w", want.Name, err)
		}
		if err := waitEstablished(ctx, c, want.Name); err != nil {
			return err
		}
		progress(fmt.Sprintf("customresourcedefinition.apiextensions.k8s.io/%s serverside-applied and established", want.Name))
	}
	if err := applyKroCRD(ctx, c, progress); err != nil {
		return err
	}
	return applyDeliveryPolicy(ctx, c, controllers, progress)
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return false, nil //nolint:nilerr // keep polling until the deadline
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s not Established: %w", name, err)
	}
	return nil
}
