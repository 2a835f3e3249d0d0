package sources_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// argoSecret is an Argo CD cluster Secret for a plane; tls is Argo CD's tlsClientConfig, to
// which the plane's CA is added.
func argoSecret(t *testing.T, p *localfleet.Plane, secretName, name string, labels map[string]string, config map[string]any) *corev1.Secret {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(p.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	tls, _ := config["tlsClientConfig"].(map[string]any)
	if tls == nil {
		tls = map[string]any{}
	}
	for _, c := range kc.Clusters {
		tls["caData"] = c.CertificateAuthorityData
	}
	config["tlsClientConfig"] = tls
	data, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{sources.ArgoCDSecretTypeLabel: "cluster"}
	for k, v := range labels {
		all[k] = v
	}
	return secret("argocd", secretName, all, map[string][]byte{"name": []byte(name), "server": []byte(p.Server()), "config": data})
}

// clientCertificate returns the admin client certificate and key of a plane.
func clientCertificate(t *testing.T, p *localfleet.Plane) (cert, key []byte) {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(p.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range kc.AuthInfos {
		return u.ClientCertificateData, u.ClientKeyData
	}
	t.Fatal("no user in the plane's kubeconfig")
	return nil, nil
}

func TestArgoCD(t *testing.T) {
	e := startEnv(t, sources.Options{ArgoCD: true}, func(hub client.Client) {
		installCRD(t, hub, "argoproj.io_applications.yaml")
	}, "spoke-a", "spoke-b")
	ctx := context.Background()
	spokeA, spokeB := e.fleet.Plane("spoke-a"), e.fleet.Plane("spoke-b")
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}})

	t.Run("a bearer-token cluster Secret becomes a Cluster with its labels", func(t *testing.T) {
		token := serviceAccountToken(t, spokeA, "argocd-manager")
		e.create(t, argoSecret(t, spokeA, "cluster-spoke-a", "prod-a", map[string]string{"env": "prod", "argocd.argoproj.io/auto-label": "x"},
			map[string]any{"bearerToken": token}))
		c := e.cluster(t, "prod-a", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		if c.Labels["env"] != "prod" || c.Labels[flotillav1.LabelSource] != flotillav1.SourceArgoCD {
			t.Errorf("labels %v", c.Labels)
		}
		if _, ok := c.Labels["argocd.argoproj.io/auto-label"]; ok {
			t.Errorf("Argo CD's own label was carried over: %v", c.Labels)
		}
		if c.Annotations[flotillav1.AnnotationSourceRef] != "argocd/cluster-spoke-a" {
			t.Errorf("source-ref %q", c.Annotations[flotillav1.AnnotationSourceRef])
		}
		e.probedAs(t, "spoke-a", "system:serviceaccount:default:argocd-manager")
		if !strings.Contains(logs.String(), "Importing clusters from Argo CD cluster Secrets") {
			t.Error("the start-up log does not say that Argo CD clusters are imported")
		}
		if strings.Contains(logs.String(), token) {
			t.Fatal("the token appears in the controller's logs")
		}
	})

	t.Run("a TLS client-certificate cluster Secret is imported", func(t *testing.T) {
		cert, key := clientCertificate(t, spokeB)
		e.create(t, argoSecret(t, spokeB, "cluster-spoke-b", "prod-b", nil,
			map[string]any{"tlsClientConfig": map[string]any{"certData": cert, "keyData": key}}))
		e.cluster(t, "prod-b", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
	})

	t.Run("exec and AWS configs are refused by name and nothing is imported", func(t *testing.T) {
		e.create(t, argoSecret(t, spokeB, "cluster-exec", "exec", nil,
			map[string]any{"execProviderConfig": map[string]any{"command": "/bin/sh", "args": []string{"-c", "true"}}}))
		msg := e.event(t, "argocd", "cluster-exec", sources.ReasonUnsupported)
		if !strings.Contains(msg, "execProviderConfig") {
			t.Errorf("event message %q", msg)
		}
		e.absent(t, "exec", 2*time.Second)
	})

	t.Run("rotated credentials re-engage the spoke", func(t *testing.T) {
		token := serviceAccountToken(t, spokeA, "argocd-rotated")
		s := &corev1.Secret{}
		s.Namespace, s.Name = "argocd", "cluster-spoke-a"
		fresh := argoSecret(t, spokeA, "cluster-spoke-a", "prod-a", nil, map[string]any{"bearerToken": token})
		e.update(t, s, func() { s.Data["config"] = fresh.Data["config"] })
		e.probedAs(t, "spoke-a", "system:serviceaccount:default:argocd-rotated")
	})

	t.Run("a renamed cluster moves to its new name", func(t *testing.T) {
		s := &corev1.Secret{}
		s.Namespace, s.Name = "argocd", "cluster-spoke-a"
		e.update(t, s, func() { s.Data["name"] = []byte("prod-a2") })
		e.cluster(t, "prod-a2", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		e.gone(t, "prod-a")
	})

	t.Run("deleting the cluster Secret disconnects and deletes nothing on the spoke", func(t *testing.T) {
		if err := e.hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-spoke-b"}}); err != nil {
			t.Fatal(err)
		}
		e.gone(t, "prod-b")
		fleettest.Eventually(t, wait, "credentials secret deleted", func() error {
			err := e.hub.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "prod-b-imported-kubeconfig"}, &corev1.Secret{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return errorf("still there (%v)", err)
		})
		e.noDeletes(t, "spoke-b")
	})
}
