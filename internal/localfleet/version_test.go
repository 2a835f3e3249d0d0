package localfleet

import (
	"os"
	"regexp"
	"testing"
)

// The Makefile stamps the binaries it builds; the fleet and the tests expect that stamp.
func TestKubernetesVersionMatchesMakefile(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KUBE_VERSION := (\S+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no KUBE_VERSION")
	}
	if string(m[1]) != KubernetesVersion {
		t.Errorf("Makefile builds %s, localfleet.KubernetesVersion is %s: change both together", m[1], KubernetesVersion)
	}
}
