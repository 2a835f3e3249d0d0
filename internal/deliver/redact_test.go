package deliver

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSecretError(t *testing.T) {
	const canary = "canary-51e0d2"
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "team"},
		"data":     map[string]any{"token": "eA=="}, "stringData": map[string]any{"password": canary}}}
	configMap := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "db", "namespace": "team"}}}
	quoting := apierrors.NewBadRequest(`.stringData.password: expected map, got &{` + canary + `}`)
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "db", nil)
	invalid.ErrStatus.Message = `Secret "db" is invalid: data: Invalid value: "` + canary + `"`
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "db",
		errors.New(`User "system:serviceaccount:flotilla-system:flotilla" cannot patch resource "secrets"`))

	for _, tc := range []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"bad request", quoting, apierrors.IsBadRequest},
		{"invalid", invalid, apierrors.IsInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SecretError(secret, tc.err)
			if strings.Contains(got.Error(), canary) {
				t.Fatalf("the message quotes the Secret: %v", got)
			}
			if !strings.Contains(got.Error(), "keys: password, token") || !tc.is(got) {
				t.Fatalf("%v: want the key names, and the same kind of error", got)
			}
		})
	}
	if got := SecretError(configMap, quoting); got != quoting {
		t.Errorf("a ConfigMap's error changed: %v", got)
	}
	if got := SecretError(secret, forbidden); got != forbidden {
		t.Errorf("the authorizer's refusal must stay as worded: %v", got)
	}
	plain := errors.New("connection refused")
	if got := SecretError(secret, plain); got != plain {
		t.Errorf("a client-side error changed: %v", got)
	}
}
