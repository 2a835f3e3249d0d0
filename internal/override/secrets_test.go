package override

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

const canary = "canary-7f3a9c"

func secret() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "db", "namespace": "shop", "labels": map[string]any{"flotilla.dev/owner": "x"}},
		"stringData": map[string]any{"password": canary},
	}}
}

// An override author may not be allowed to read Secrets: no rule reads or changes one, so
// none can copy a value out or test guesses against it.
func TestOverridesNeverTouchSecrets(t *testing.T) {
	reads := []flotillav1.Override{
		{Name: "cel-copies", CEL: &flotillav1.CELOverride{Path: "/metadata/labels/leak", Expression: `object.stringData.password`}},
		{Name: "cel-fails-quoting", CEL: &flotillav1.CELOverride{Path: "/metadata/labels/leak", Expression: `string(timestamp(object.stringData.password))`}},
		{Name: "patch-tests", JSONPatch: []flotillav1.JSONPatchOperation{{Op: "test", Path: "/stringData/password", Value: raw(`"guess"`)}}},
		{Name: "patch-copies", JSONPatch: []flotillav1.JSONPatchOperation{{Op: "copy", From: "/stringData/password", Path: "/metadata/annotations"}}},
		{Name: "merge", MergePatch: raw(`{"metadata":{"labels":{"tier":"edge"}}}`)},
	}
	for _, rule := range reads {
		t.Run("unkinded "+rule.Name, func(t *testing.T) {
			in := secret()
			out, applied, err := Apply(Compile([]flotillav1.Override{rule}), eu, in)
			if err != nil || applied != nil || out != in {
				t.Fatalf("a rule that names no kind must pass a Secret by: applied %v, err %v", applied, err)
			}
			// The same rule still applies to the other objects.
			if _, applied, _ := Apply(Compile([]flotillav1.Override{rule}), eu, deployment()); rule.Name == "merge" && applied == nil {
				t.Fatal("the rule no longer applies to a Deployment")
			}
		})
	}
	for _, target := range []flotillav1.OverrideTarget{{Kind: "Secret"}, {APIVersion: "v1", Kind: "Secret", Name: "db"}} {
		rule := reads[1]
		rule.Target = &target
		_, _, err := Apply(Compile([]flotillav1.Override{rule}), eu, secret())
		if !errors.Is(err, errSecretTarget) || !strings.Contains(err.Error(), `override "cel-fails-quoting"`) {
			t.Fatalf("a rule naming the Secret kind: err %v, want it refused by name", err)
		}
		if strings.Contains(err.Error(), canary) {
			t.Fatalf("the refusal quotes the Secret: %v", err)
		}
	}
}
