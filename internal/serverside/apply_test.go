package serverside

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestApplyTypedObject(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "flotilla-system", Labels: map[string]string{"a": "1"}},
		Data:       map[string][]byte{"kubeconfig": []byte("x")},
	}
	if err := Apply(ctx, c, secret, client.FieldOwner("flotilla"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	if secret.ResourceVersion == "" {
		t.Errorf("the applied object was not filled from the server's answer")
	}
	got := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), got); err != nil {
		t.Fatal(err)
	}
	if string(got.Data["kubeconfig"]) != "x" || got.Labels["a"] != "1" {
		t.Errorf("stored secret = %+v", got)
	}
}
