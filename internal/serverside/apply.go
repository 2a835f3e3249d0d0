// Package serverside applies objects with server-side apply through controller-runtime's
// Client.Apply, which takes apply configurations: a typed object (a Secret, a Cluster, a
// CustomResourceDefinition read from a manifest) is sent as its unstructured form, so no
// generated apply configuration is needed.
package serverside

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply server-side applies obj, which must carry its apiVersion and kind, and fills obj with
// what the server returns, as Patch with client.Apply did.
func Apply(ctx context.Context, c client.Client, obj client.Object, opts ...client.ApplyOption) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}
