package inventory

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"
)

// jwt builds an unsigned token with these claims; the hub never verifies signatures.
func jwt(t *testing.T, claims any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc(payload) + ".c2ln"
}

func saClaims(iat, exp int64, secret bool) map[string]any {
	k := map[string]any{"namespace": "flotilla-system", "serviceaccount": map[string]any{"name": "flotilla", "uid": "sa-uid"}}
	if secret {
		k["secret"] = map[string]any{"name": "flotilla-token-abcde", "uid": "secret-uid"}
	}
	return map[string]any{"iat": iat, "exp": exp, "kubernetes.io": k}
}

func TestParseToken(t *testing.T) {
	tests := []struct {
		name   string
		token  string
		ok     bool
		secret bool
	}{
		{"bound ServiceAccount token", jwt(t, saClaims(1000, 1600, true)), true, true},
		{"unbound ServiceAccount token", jwt(t, saClaims(1000, 1600, false)), true, false},
		{"no expiry", jwt(t, map[string]any{"iat": 1000}), false, false},
		{"expiry before issue", jwt(t, saClaims(1600, 1000, true)), false, false},
		{"not a JWT", "canary-f1071lla-s3cr3t", false, false},
		{"payload not base64", "a.!!!.c", false, false},
		{"payload not JSON", "a." + base64.RawURLEncoding.EncodeToString([]byte("{{")) + ".c", false, false},
		{"empty", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseToken(tt.token)
			if (c != nil) != tt.ok {
				t.Fatalf("parseToken = %+v, want ok=%t", c, tt.ok)
			}
			if c == nil {
				return
			}
			if c.lifetime() != 600*time.Second || !c.expires().Equal(time.Unix(1600, 0)) {
				t.Errorf("lifetime %s, expires %s", c.lifetime(), c.expires())
			}
			if (c.Kubernetes.Secret != nil) != tt.secret || c.Kubernetes.ServiceAccount.Name != "flotilla" {
				t.Errorf("claims %+v", c.Kubernetes)
			}
			if got := c.renewFrom(1.0 / 3); !got.Equal(time.Unix(1400, 0)) {
				t.Errorf("renewFrom(1/3) = %s, want %s", got, time.Unix(1400, 0))
			}
		})
	}
}
