package sources

import (
	"strings"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
)

func TestArgoKubeconfig(t *testing.T) {
	const canary = "canary-t0k3n"
	ca := `"` + "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==" + `"`
	for _, tc := range []struct {
		name, server, config string
		wantErr              string // empty: a kubeconfig the hardened loader accepts
	}{
		{"bearer token", "https://10.0.0.1:6443", `{"bearerToken":"` + canary + `","tlsClientConfig":{"caData":` + ca + `}}`, ""},
		{"client certificate", "https://10.0.0.1:6443", `{"tlsClientConfig":{"certData":"Y2VydA==","keyData":"a2V5","serverName":"kube"}}`, ""},
		{"insecure", "https://10.0.0.1", `{"bearerToken":"` + canary + `","tlsClientConfig":{"insecure":true}}`, ""},
		{"exec provider", "https://10.0.0.1", `{"execProviderConfig":{"command":"argocd-k8s-auth","args":["` + canary + `"]}}`, "execProviderConfig"},
		{"aws", "https://10.0.0.1", `{"awsAuthConfig":{"clusterName":"` + canary + `"}}`, "awsAuthConfig"},
		{"basic auth", "https://10.0.0.1", `{"username":"admin","password":"` + canary + `"}`, "username/password"},
		{"proxy", "https://10.0.0.1", `{"bearerToken":"x","proxyUrl":"http://` + canary + `"}`, "proxyUrl"},
		{"no credentials", "https://10.0.0.1", `{"tlsClientConfig":{"insecure":false}}`, "neither bearerToken"},
		{"not JSON", "https://10.0.0.1", `{` + canary, "not Argo CD's JSON"},
		{"http server", "http://10.0.0.1", `{"bearerToken":"x"}`, "https://"},
		{"credentials in the server", "https://u:" + canary + "@10.0.0.1", `{"bearerToken":"x"}`, "without credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := argoKubeconfig("prod", tc.server, []byte(tc.config))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), canary) {
					t.Fatalf("the error quotes a value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := kubeconfig.Parse(data)
			if err != nil {
				t.Fatalf("the hardened loader refuses the kubeconfig: %v", err)
			}
			if cfg.Host != tc.server {
				t.Errorf("host %q", cfg.Host)
			}
		})
	}
}
