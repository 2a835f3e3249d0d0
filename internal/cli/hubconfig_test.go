package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoHubKubeconfigSaysWhatToDo: without a kubeconfig for the hub, the error names the
// files tried and the flag or variable to set, not client-go's KUBERNETES_MASTER.
func TestNoHubKubeconfigSaysWhatToDo(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster: no in-cluster config either
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.kubeconfig")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.kubeconfig")
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{missing + string(os.PathListSeparator) + empty, nil,
			"--hub-kubeconfig is not set, and KUBECONFIG names " + missing + " does not exist, " + empty + " has no cluster for its current context"},
		{"", []string{"--hub-kubeconfig", missing}, "--hub-kubeconfig " + missing + " does not exist"},
		{missing, []string{"--hub-kubeconfig", empty}, "--hub-kubeconfig " + empty + " has no cluster for its current context"},
	} {
		t.Setenv("KUBECONFIG", tt.env)
		_, err := run(t, nil, append([]string{"get", "clusters"}, tt.args...)...)
		wantError(t, err, "no hub to connect to: "+tt.want, "; pass --hub-kubeconfig FILE or set KUBECONFIG=FILE")
		if err != nil && strings.Contains(err.Error(), "KUBERNETES_MASTER") {
			t.Errorf("error %q still speaks of KUBERNETES_MASTER", err)
		}
	}
	err := noHubKubeconfig("", "", filepath.Join(dir, ".kube", "config"))
	wantError(t, err, "no hub to connect to: --hub-kubeconfig and KUBECONFIG are not set, and "+filepath.Join(dir, ".kube", "config")+" does not exist")
}
