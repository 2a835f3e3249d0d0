package membership

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidateName checks that name can name a Cluster. The name becomes a label value (the
// credentials Secret's flotilla.dev/cluster label) and part of the Secret name
// <name>-kubeconfig, so it must be a DNS-1123 label: a longer DNS-1123 subdomain would fail
// only after the spoke's ServiceAccount and token exist.
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q is not valid: a cluster name must be a DNS-1123 label "+
			"(at most %d characters, lowercase letters, digits and '-', starting and ending with a letter or digit), "+
			"because it is used as a label value: %s", name, validation.DNS1123LabelMaxLength, strings.Join(errs, "; "))
	}
	return nil
}
