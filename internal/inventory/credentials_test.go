package inventory

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestRestConfigFromKubeconfig(t *testing.T) {
	base := func() *clientcmdapi.Config {
		c := clientcmdapi.NewConfig()
		c.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("ca")}
		c.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
		c.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
		c.CurrentContext = "ctx"
		return c
	}
	tests := []struct {
		name    string
		mutate  func(*clientcmdapi.Config)
		raw     string
		wantErr string
	}{
		{name: "token kubeconfig"},
		{name: "single context without current-context", mutate: func(c *clientcmdapi.Config) { c.CurrentContext = "" }},
		{name: "exec plugin", mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: "rm"}
		}, wantErr: "exec or auth-provider"},
		{name: "token file", mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].TokenFile = "/etc/shadow" }, wantErr: "references files"},
		{name: "client certificate file", mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].ClientCertificate = "/tmp/x" }, wantErr: "references files"},
		{name: "CA file", mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].CertificateAuthority = "/tmp/ca" }, wantErr: "CA file"},
		{name: "two contexts and none current", mutate: func(c *clientcmdapi.Config) {
			c.Contexts["other"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
			c.CurrentContext = ""
		}, wantErr: "no current-context"},
		{name: "no server", mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "" }, wantErr: ""},
		{name: "not YAML", raw: "{{{ not yaml", wantErr: "yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.raw)
			if tt.raw == "" {
				c := base()
				if tt.mutate != nil {
					tt.mutate(c)
				}
				var err error
				if data, err = clientcmd.Write(*c); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := restConfigFromKubeconfig(data)
			if tt.name == "no server" {
				if err == nil {
					t.Fatal("a kubeconfig without a server was accepted")
				}
				return
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "t" {
					t.Fatalf("config = %s %q", cfg.Host, cfg.BearerToken)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
