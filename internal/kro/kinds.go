package kro

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	"github.com/kubernetes-sigs/kro/pkg/metadata"
)

// CRDName is the name of the CRD an RGD generates, <plural of lower(kind)>.<group>, as kro names
// it. It depends on the RGD's schema alone, so it is known without compiling (a cluster where
// the RGD does not compile may still serve the CRD of an earlier generation).
func CRDName(rgd *ResourceGraphDefinition) string {
	if rgd.Spec.Schema == nil {
		return ""
	}
	group := rgd.Spec.Schema.Group
	if group == "" {
		group = v1alpha1.KRODomainName
	}
	gvr := metadata.GetResourceGraphDefinitionInstanceGVR(group, rgd.Spec.Schema.APIVersion, rgd.Spec.Schema.Kind)
	return gvr.Resource + "." + gvr.Group
}

// InstanceKind is the kind of an RGD's instances, from its schema (group defaulted as kro does).
func InstanceKind(rgd *ResourceGraphDefinition) schema.GroupVersionKind {
	if rgd.Spec.Schema == nil {
		return schema.GroupVersionKind{}
	}
	group := rgd.Spec.Schema.Group
	if group == "" {
		group = v1alpha1.KRODomainName
	}
	return schema.GroupVersionKind{Group: group, Version: rgd.Spec.Schema.APIVersion, Kind: rgd.Spec.Schema.Kind}
}

// ReferencedKinds are the kinds an RGD's resources use (templates and external references),
// sorted and without duplicates: the kinds whose schemas a compile of it reads from a cluster.
// A template that cannot be parsed is skipped; Compile reports it.
func ReferencedKinds(rgd *ResourceGraphDefinition) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	for _, r := range rgd.Spec.Resources {
		if k, ok := kindOf(r); ok {
			seen[k] = true
		}
	}
	out := make([]schema.GroupVersionKind, 0, len(seen))
	for gvk := range seen {
		out = append(out, gvk)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int {
		return strings.Compare(a.Group+"/"+a.Version+"/"+a.Kind, b.Group+"/"+b.Version+"/"+b.Kind)
	})
	return out
}

// kindOf reads the kind a resource of an RGD uses: its external reference's, or its template's
// apiVersion and kind. ok is false for a missing resource or a template that cannot be parsed
// (Compile reports it).
func kindOf(r *v1alpha1.Resource) (schema.GroupVersionKind, bool) {
	if r == nil {
		return schema.GroupVersionKind{}, false
	}
	var typeMeta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	switch {
	case r.ExternalRef != nil:
		typeMeta.APIVersion, typeMeta.Kind = r.ExternalRef.APIVersion, r.ExternalRef.Kind
	case len(r.Template.Raw) > 0:
		if yaml.Unmarshal(r.Template.Raw, &typeMeta) != nil {
			return schema.GroupVersionKind{}, false
		}
	}
	gv, err := schema.ParseGroupVersion(typeMeta.APIVersion)
	if err != nil || typeMeta.Kind == "" {
		return schema.GroupVersionKind{}, false
	}
	return gv.WithKind(typeMeta.Kind), true
}
