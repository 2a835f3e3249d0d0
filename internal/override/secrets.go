package override

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Overrides never read or change Secrets. A rule runs with the controller's rights, which read
// every Secret, while its author may hold no `get secrets`: a CEL expression or a JSON patch
// `test` over a Secret would let them read it, through what the rule writes or through whether
// it fails. So a rule that does not name a kind passes Secrets by, and a rule that names the
// Secret kind is refused (errSecretTarget, on every cluster it matches).
var errSecretTarget = errors.New("targets Secrets, which overrides never read or change (their author may not be allowed to read them); deliver a per-cluster Secret as an object of its own instead")

// isSecret reports whether o is a core Secret.
func isSecret(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// targetsSecrets reports whether a rule's target names the core Secret kind.
func targetsSecrets(t flotillav1.OverrideTarget) bool {
	return t.Kind == "Secret" && (t.APIVersion == "" || t.APIVersion == "v1")
}
