package kubeconfig

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// canary stands for a credential; no error may repeat it.
const canary = "canary-5f1d2a"

func TestParse(t *testing.T) {
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
		wantErr string // empty: accepted
		refused bool   // want a *RefusedError
	}{
		{name: "token kubeconfig"},
		{name: "client certificate data", mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("cert"), ClientKeyData: []byte("key")}
		}},
		{name: "single context without current-context", mutate: func(c *clientcmdapi.Config) { c.CurrentContext = "" }},
		{name: "exec plugin", mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: "rm", Args: []string{canary}}
		}, wantErr: `user "u": exec plugin`, refused: true},
		{name: "auth-provider plugin", mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"id-token": canary}}
		}, wantErr: `user "u": auth-provider plugin`, refused: true},
		{name: "token file", mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].TokenFile = "/etc/" + canary },
			wantErr: `user "u": tokenFile`, refused: true},
		{name: "client certificate file", mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].ClientCertificate = "/tmp/x" },
			wantErr: `user "u": client-certificate file`, refused: true},
		{name: "client key file", mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].ClientKey = "/tmp/x" },
			wantErr: `user "u": client-key file`, refused: true},
		{name: "CA file", mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].CertificateAuthority = "/tmp/ca" },
			wantErr: `cluster "c": certificate-authority file`, refused: true},
		{name: "plugin in a user no context uses", mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["spare"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "sh"}}
		}, wantErr: `user "spare": exec plugin`, refused: true},
		{name: "every refusal is named, in order", mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].TokenFile = "/t"
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "sh"}}
		}, wantErr: `refused user "a": exec plugin, user "u": tokenFile: `, refused: true},
		{name: "credentials in the server address", mutate: func(c *clientcmdapi.Config) {
			c.Clusters["c"].Server = "https://admin:" + canary + "@127.0.0.1:6443"
		}, wantErr: `cluster "c": credentials in the server address`, refused: true},
		{name: "server address that is not a URL", mutate: func(c *clientcmdapi.Config) {
			c.Clusters["c"].Server = "https://" + canary + " x:6443"
		}, wantErr: "not a URL", refused: true},
		{name: "two contexts and none current", mutate: func(c *clientcmdapi.Config) {
			c.Contexts["other"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
			c.CurrentContext = ""
		}, wantErr: "no current-context"},
		{name: "no server", mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "" }, wantErr: "server"},
		{name: "not YAML", raw: "{{{ not yaml", wantErr: "does not parse as YAML"},
		{name: "YAML that quotes its content in errors", raw: "users:\n- {" + canary + ": 1}: x\n", wantErr: "does not parse as YAML"},
		{name: "JSON of the wrong shape", raw: `{"clusters": "` + canary + `"}`, wantErr: "does not parse as YAML"},
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
			cfg, err := Parse(data)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Host != "https://127.0.0.1:6443" {
					t.Fatalf("host = %s", cfg.Host)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), canary) {
				t.Fatalf("error quotes the kubeconfig: %v", err)
			}
			var refused *RefusedError
			if errors.As(err, &refused) != tt.refused {
				t.Fatalf("error %v: RefusedError = %t, want %t", err, !tt.refused, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "must carry its credentials inline") {
				t.Fatalf("refusal does not say what to do: %v", err)
			}
		})
	}
}
