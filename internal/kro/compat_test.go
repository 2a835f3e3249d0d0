package kro

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckCRDUpdate(t *testing.T) {
	compile := func(rgd *ResourceGraphDefinition) *Compiled {
		t.Helper()
		c, err := Compile(rgd, spokeSnapshot(t), DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rgd := corpusRGD(t, "examples/kubernetes/webapp/rg.yaml")
	served := compile(rgd).CRD()

	t.Run("the same RGD changes nothing", func(t *testing.T) {
		update, err := CheckCRDUpdate(rgd, served, compile(rgd).CRD())
		if err != nil || update.Changed || len(update.Breaking) > 0 {
			t.Fatalf("%+v %v", update, err)
		}
	})

	t.Run("a new optional field is a compatible change", func(t *testing.T) {
		next := rgd.DeepCopy()
		next.Spec.Schema.Spec.Raw = []byte(strings.Replace(string(next.Spec.Schema.Spec.Raw), `"image":`, `"tier":"string | default=web","image":`, 1))
		update, err := CheckCRDUpdate(next, served, compile(next).CRD())
		if err != nil || !update.Changed || len(update.Breaking) > 0 {
			t.Fatalf("%+v %v", update, err)
		}
	})

	// An RGD whose served CRD has a field that the next revision drops.
	withTier := rgd.DeepCopy()
	withTier.Spec.Schema.Spec.Raw = []byte(strings.Replace(string(withTier.Spec.Schema.Spec.Raw), `"image":`, `"tier":"string | default=web","image":`, 1))
	servedWithTier := compile(withTier).CRD()
	removed := rgd.DeepCopy()
	t.Run("a removed field is refused", func(t *testing.T) {
		update, err := CheckCRDUpdate(removed, servedWithTier, compile(removed).CRD())
		var breaking *BreakingChangeError
		if !errors.As(err, &breaking) || len(update.Breaking) == 0 || !strings.Contains(err.Error(), "tier") {
			t.Fatalf("%+v %v, want a breaking change naming spec.tier", update, err)
		}
	})

	t.Run("kro.run/allow-breaking-changes lets it through", func(t *testing.T) {
		allowed := removed.DeepCopy()
		allowed.Annotations = map[string]string{AllowBreakingChangesAnnotation: "true"}
		update, err := CheckCRDUpdate(allowed, servedWithTier, compile(allowed).CRD())
		if err != nil || !update.Changed || len(update.Breaking) == 0 {
			t.Fatalf("%+v %v", update, err)
		}
	})

	t.Run("a CRD that is not this RGD's is a conflict", func(t *testing.T) {
		foreign := served.DeepCopy()
		foreign.Labels = nil
		var conflict *CRDConflictError
		if _, err := CheckCRDUpdate(rgd, foreign, compile(rgd).CRD()); !errors.As(err, &conflict) || conflict.OwnerRGD != "" {
			t.Fatalf("unlabelled CRD: %v", err)
		}
		other := served.DeepCopy()
		other.Labels[RGDNameLabel] = "someone-else"
		if _, err := CheckCRDUpdate(rgd, other, compile(rgd).CRD()); !errors.As(err, &conflict) || conflict.OwnerRGD != "someone-else" {
			t.Fatalf("another RGD's CRD: %v", err)
		}
		// A recreated RGD (same name, new uid) adopts its CRD, as in kro.
		recreated := rgd.DeepCopy()
		recreated.UID = "a-new-uid"
		if _, err := CheckCRDUpdate(recreated, served, compile(recreated).CRD()); err != nil {
			t.Fatalf("recreated RGD: %v", err)
		}
	})
}
