package membership

import (
	"slices"
	"testing"
	"time"
)

func TestDeliveryRulesWithholdEscalation(t *testing.T) {
	for _, r := range deliveryRules() {
		for _, v := range r.Verbs {
			if v == "*" || v == "escalate" || v == "bind" || v == "impersonate" || v == "approve" || v == "sign" {
				t.Errorf("rule %+v grants %q", r, v)
			}
		}
		if len(r.NonResourceURLs) > 0 && !slices.Equal(r.Verbs, []string{"get"}) {
			t.Errorf("non-resource rule %+v grants more than get", r)
		}
	}
}

func TestValidateTokenLifetime(t *testing.T) {
	tests := []struct {
		d  time.Duration
		ok bool
	}{
		{0, true}, // the default
		{10 * time.Minute, true},
		{24 * time.Hour, true},
		{7 * 24 * time.Hour, true},
		{9 * time.Minute, false},
		{7*24*time.Hour + time.Second, false},
		{365 * 24 * time.Hour, false},
		{-time.Hour, false},
		{time.Hour + time.Millisecond, false},
	}
	for _, tt := range tests {
		if err := ValidateTokenLifetime(tt.d); (err == nil) != tt.ok {
			t.Errorf("ValidateTokenLifetime(%s) = %v, want ok=%t", tt.d, err, tt.ok)
		}
	}
}

func TestValidateRole(t *testing.T) {
	for role, ok := range map[string]bool{"": true, "cluster-admin": true, "system:aggregate-to-view": true, "a/b": false, "..": false, "x%y": false} {
		if err := ValidateRole(role); (err == nil) != ok {
			t.Errorf("ValidateRole(%q) = %v, want ok=%t", role, err, ok)
		}
	}
}
