package inventory

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// tokenClaims is what the hub reads from a ServiceAccount token, the JWT the spoke's
// TokenRequest API issued: its lifetime, the account it is for, and the object it is bound to.
// The payload is decoded without verifying the signature: the spoke verifies the token on
// every request, and the hub only needs to know when to renew its own token. Nothing read here
// is ever logged or written anywhere.
type tokenClaims struct {
	IssuedAt   int64 `json:"iat"`
	Expiry     int64 `json:"exp"`
	Kubernetes struct {
		Namespace      string    `json:"namespace"`
		ServiceAccount tokenRef  `json:"serviceaccount"`
		Secret         *tokenRef `json:"secret,omitempty"`
	} `json:"kubernetes.io"`
}

// tokenRef names an object in a token's claims.
type tokenRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// parseToken reads the claims of a JWT. It returns nil for anything that is not a JWT with an
// issue and an expiry time.
func parseToken(token string) *tokenClaims {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var c tokenClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.Expiry <= 0 || c.IssuedAt <= 0 || c.Expiry <= c.IssuedAt {
		return nil
	}
	return &c
}

func (c *tokenClaims) expires() time.Time { return time.Unix(c.Expiry, 0) }

func (c *tokenClaims) lifetime() time.Duration {
	return time.Duration(c.Expiry-c.IssuedAt) * time.Second
}

// renewFrom is when less than fraction of the token's lifetime is left.
func (c *tokenClaims) renewFrom(fraction float64) time.Time {
	return c.expires().Add(-time.Duration(fraction * float64(c.lifetime())))
}
