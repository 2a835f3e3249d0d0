package kro

import (
	"fmt"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubernetes-sigs/kro/pkg/graph/crd/compat"
	"github.com/kubernetes-sigs/kro/pkg/metadata"
)

// CRDUpdate is what replacing a served CRD by a newly compiled one would change.
type CRDUpdate struct {
	// Changed says that the served CRD differs (schema, printer columns, served or status
	// subresource, names) and must be updated.
	Changed bool
	// Breaking describes the changes that break existing instances or clients: a field
	// removed, a type changed, a new required field without a default, an enum narrowed, a
	// constraint tightened.
	Breaking []string
}

// CompareCRDs compares the CRD served on a cluster with the one compiled for it, with kro's
// compatibility rules.
func CompareCRDs(served, compiled *extv1.CustomResourceDefinition) (CRDUpdate, error) {
	report, err := compat.CompareVersions(served.Spec.Versions, compiled.Spec.Versions)
	if err != nil {
		return CRDUpdate{}, fmt.Errorf("compare CRD %s: %w", compiled.Name, err)
	}
	update := CRDUpdate{
		Changed: report.HasChanges() || !equality.Semantic.DeepEqual(served.Spec.Names, compiled.Spec.Names),
	}
	for _, change := range report.BreakingChanges {
		update.Breaking = append(update.Breaking, change.Description())
	}
	return update, nil
}

// CheckCRDUpdate decides, as kro does before it writes a CRD, whether the CRD compiled from
// rgd may replace the one served on a cluster: the served CRD must be kro's and belong to an
// RGD of the same name (a recreated RGD, with another uid, adopts it), and a breaking change
// needs the RGD's kro.run/allow-breaking-changes: "true" annotation.
func CheckCRDUpdate(rgd *ResourceGraphDefinition, served, compiled *extv1.CustomResourceDefinition) (CRDUpdate, error) {
	owned, sameName, _ := metadata.CompareRGDOwnership(served.ObjectMeta, compiled.ObjectMeta)
	if !owned {
		return CRDUpdate{}, &CRDConflictError{CRD: served.Name}
	}
	if !sameName {
		return CRDUpdate{}, &CRDConflictError{CRD: served.Name, OwnerRGD: served.Labels[RGDNameLabel]}
	}
	update, err := CompareCRDs(served, compiled)
	if err != nil {
		return CRDUpdate{}, err
	}
	if len(update.Breaking) > 0 && rgd.Annotations[AllowBreakingChangesAnnotation] != "true" {
		return update, &BreakingChangeError{CRD: compiled.Name, Changes: update.Breaking}
	}
	return update, nil
}

// CRDConflictError says that a served CRD of the same name is not this RGD's.
type CRDConflictError struct {
	CRD string
	// OwnerRGD names the RGD that owns it, empty when kro does not own it at all.
	OwnerRGD string
}

func (e *CRDConflictError) Error() string {
	if e.OwnerRGD == "" {
		return fmt.Sprintf("CRD %s already exists and is not owned by kro", e.CRD)
	}
	return fmt.Sprintf("CRD %s is owned by another ResourceGraphDefinition %s", e.CRD, e.OwnerRGD)
}

// BreakingChangeError says that the compiled CRD would break the served one and the RGD does
// not allow it.
type BreakingChangeError struct {
	CRD     string
	Changes []string
}

func (e *BreakingChangeError) Error() string {
	return fmt.Sprintf("cannot update CRD %s: breaking changes detected (set %s: \"true\" on the RGD to allow them): %s",
		e.CRD, AllowBreakingChangesAnnotation, summarize(e.Changes))
}

// summarize keeps a message short, as kro's report does: three changes, then a count.
func summarize(changes []string) string {
	const shown = 3
	s := ""
	for i, c := range changes {
		if i == shown {
			return s + fmt.Sprintf("; and %d more changes", len(changes)-shown)
		}
		if i > 0 {
			s += "; "
		}
		s += c
	}
	return s
}
