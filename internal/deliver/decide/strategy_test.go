package decide

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestModeOf(t *testing.T) {
	cases := []struct {
		name       string
		annotation string
		strategy   flotillav1.ApplyMode
		want       flotillav1.ApplyMode
	}{
		{"default", "", "", flotillav1.ModeReconcile},
		{"the strategy's", "", flotillav1.ModeApplyOnce, flotillav1.ModeApplyOnce},
		{"the annotation over the strategy", "ApplyOnce", flotillav1.ModeReconcile, flotillav1.ModeApplyOnce},
		{"the annotation back to Reconcile", "Reconcile", flotillav1.ModeApplyOnce, flotillav1.ModeReconcile},
		{"an unknown annotation falls back to the strategy", "Sometimes", flotillav1.ModeApplyOnce, flotillav1.ModeApplyOnce},
		{"an unknown annotation falls back to the default", "applyonce", "", flotillav1.ModeReconcile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := desired()
			if c.annotation != "" {
				obj = desired(flotillav1.AnnotationMode, c.annotation)
			}
			if got := ModeOf(obj, Strategy{Mode: c.strategy}); got != c.want {
				t.Errorf("ModeOf = %q, want %q", got, c.want)
			}
		})
	}
}

func TestDriftOf(t *testing.T) {
	cases := []struct {
		name       string
		annotation string
		strategy   flotillav1.DriftPolicy
		want       flotillav1.DriftPolicy
	}{
		{"default", "", "", flotillav1.DriftCorrect},
		{"the strategy's", "", flotillav1.DriftReport, flotillav1.DriftReport},
		{"the annotation over the strategy: Ignore", "Ignore", flotillav1.DriftCorrect, flotillav1.DriftIgnore},
		{"the annotation over the strategy: Report", "Report", flotillav1.DriftIgnore, flotillav1.DriftReport},
		{"the annotation over the strategy: Correct", "Correct", flotillav1.DriftReport, flotillav1.DriftCorrect},
		{"an unknown annotation falls back to the strategy", "Shout", flotillav1.DriftIgnore, flotillav1.DriftIgnore},
		{"an unknown annotation falls back to the default", "ignore", "", flotillav1.DriftCorrect},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := desired()
			if c.annotation != "" {
				obj = desired(flotillav1.AnnotationDrift, c.annotation)
			}
			if got := DriftOf(obj, Strategy{Drift: c.strategy}); got != c.want {
				t.Errorf("DriftOf = %q, want %q", got, c.want)
			}
		})
	}
}
