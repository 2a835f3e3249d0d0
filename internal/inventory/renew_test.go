package inventory

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestCredentialsVerdict(t *testing.T) {
	issued := time.Unix(1_000_000, 0)
	tok := &tokenClaims{IssuedAt: issued.Unix(), Expiry: issued.Add(90 * time.Minute).Unix()}
	tok.Kubernetes.Namespace, tok.Kubernetes.ServiceAccount.Name = "flotilla-system", "flotilla"
	tok.Kubernetes.Secret = &tokenRef{Name: "flotilla-token-abcde", UID: "u"}
	next := &tokenClaims{IssuedAt: issued.Add(61 * time.Minute).Unix(), Expiry: issued.Add(151 * time.Minute).Unix()}
	renewable := &credentials{token: tok}
	foreign := &credentials{token: tok, notRenewable: "Secret x/y was not written by `flotilla join`"}
	// With a 90-minute token and a third left, renewal is due from minute 60.
	early, due, expired := issued.Add(10*time.Minute), issued.Add(61*time.Minute), issued.Add(91*time.Minute)
	tests := []struct {
		name      string
		creds     *credentials
		pending   *tokenClaims
		now       time.Time
		byHub     bool
		failure   string
		status    metav1.ConditionStatus
		reason    string
		wantDue   bool
		inMessage string
	}{
		{"no token", &credentials{}, nil, early, false, "", metav1.ConditionTrue, flotillav1.ReasonNoExpiry, false, "does not renew"},
		{"valid, renewal later", renewable, nil, early, false, "", metav1.ConditionTrue, flotillav1.ReasonCredentialsValid, false, "renews it from 1970-01-12T14:46:40Z"},
		{"issued by the hub", renewable, nil, early, true, "", metav1.ConditionTrue, flotillav1.ReasonRenewed, false, "the hub renewed the token"},
		{"renewal due", renewable, nil, due, false, "", metav1.ConditionTrue, flotillav1.ReasonExpiringSoon, true, "the hub is renewing it"},
		{"renewal failed", renewable, nil, due, false, "forbidden", metav1.ConditionFalse, flotillav1.ReasonRenewFailed, true, "failed: forbidden; it stays valid until"},
		{"renewed, not yet read back", renewable, next, due, false, "forbidden", metav1.ConditionTrue, flotillav1.ReasonRenewed, false, "valid until 1970-01-12T16:17:40Z"},
		{"expired", renewable, nil, expired, false, "", metav1.ConditionFalse, flotillav1.ReasonExpired, false, "run `flotilla join`"},
		{"not renewable, valid", foreign, nil, early, false, "", metav1.ConditionTrue, flotillav1.ReasonCredentialsValid, false, "the hub cannot renew it"},
		{"not renewable, due", foreign, nil, due, false, "", metav1.ConditionTrue, flotillav1.ReasonExpiringSoon, false, "not written by `flotilla join`"},
		{"not renewable, expired", foreign, nil, expired, false, "", metav1.ConditionFalse, flotillav1.ReasonExpired, false, "expired at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, due := credentialsVerdict(tt.creds, tt.pending, tt.now, 1.0/3, tt.byHub, tt.failure)
			if obs.status != tt.status || obs.reason != tt.reason || due != tt.wantDue || !strings.Contains(obs.message, tt.inMessage) {
				t.Errorf("verdict = %+v, due %t; want %s/%s, due %t, message containing %q", obs, due, tt.status, tt.reason, tt.wantDue, tt.inMessage)
			}
		})
	}
}

func TestWhyNotRenewable(t *testing.T) {
	bound := &tokenClaims{}
	bound.Kubernetes.Namespace, bound.Kubernetes.ServiceAccount.Name = "flotilla-system", "flotilla"
	bound.Kubernetes.Secret = &tokenRef{Name: "flotilla-token-abcde"}
	unbound := &tokenClaims{}
	unbound.Kubernetes.Namespace, unbound.Kubernetes.ServiceAccount.Name = "flotilla-system", "flotilla"
	joined := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "eu-1-kubeconfig", Labels: map[string]string{flotillav1.LabelCluster: "eu-1"}}}
	users := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "eu-1-kubeconfig"}}
	tests := []struct {
		name   string
		secret *corev1.Secret
		token  *tokenClaims
		want   string
	}{
		{"join's Secret, bound token", joined, bound, ""},
		{"a user's Secret", users, bound, "not written by `flotilla join`"},
		{"no token", joined, nil, "no token with an expiry"},
		{"not a ServiceAccount token", joined, &tokenClaims{}, "not a ServiceAccount token"},
		{"unbound token", joined, unbound, "not bound to a Secret"},
	}
	for _, tt := range tests {
		got := whyNotRenewable(tt.secret, "eu-1", tt.token)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: whyNotRenewable = %q, want %q", tt.name, got, tt.want)
		}
	}
}
