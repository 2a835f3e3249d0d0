package sources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

var kubeconfigLabel = map[string]string{sources.KubeconfigSecretLabel: "true"}

func TestKubeconfigSecrets(t *testing.T) {
	e := startEnv(t, sources.Options{KubeconfigSecrets: true}, nil, "spoke-a", "spoke-b")
	ctx := context.Background()
	spokeA, spokeB := e.fleet.Plane("spoke-a"), e.fleet.Plane("spoke-b")
	idA, idB := kubeSystemUID(t, spokeA), kubeSystemUID(t, spokeB)

	e.create(t, secret("flotilla-system", "spoke-a", map[string]string{
		sources.KubeconfigSecretLabel: "true", "env": "imported", flotillav1.LabelClusterID: "forged",
	}, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, nil)}))

	t.Run("a labelled Secret becomes a Ready Cluster that says where it came from", func(t *testing.T) {
		c := e.cluster(t, "spoke-a", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		want := map[string]string{flotillav1.LabelSource: flotillav1.SourceKubeconfigSecret, "env": "imported", flotillav1.LabelClusterID: idA}
		for k, v := range want {
			if c.Labels[k] != v {
				t.Errorf("label %s = %q, want %q (labels %v)", k, c.Labels[k], v, c.Labels)
			}
		}
		if _, ok := c.Labels[sources.KubeconfigSecretLabel]; ok {
			t.Errorf("the source's own marker label was carried over: %v", c.Labels)
		}
		if got := c.Annotations[flotillav1.AnnotationSourceRef]; got != "flotilla-system/spoke-a" {
			t.Errorf("source-ref = %q", got)
		}
		if got := c.Spec.Credentials; got.Namespace != "flotilla-system" || got.Name != "spoke-a-imported-kubeconfig" {
			t.Errorf("credentials = %+v", got)
		}
		e.event(t, "flotilla-system", "spoke-a", sources.ReasonImported)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.hub.Get(ctx, client.ObjectKey{Name: "clusters.flotilla.dev"}, crd); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			found = found || (col.Name == "Source" && col.JSONPath == `.metadata.labels.flotilla\.dev/source`)
		}
		if !found {
			t.Errorf("no Source column: %+v", crd.Spec.Versions[0].AdditionalPrinterColumns)
		}
		if !strings.Contains(logs.String(), "Importing clusters from kubeconfig Secrets") {
			t.Error("the start-up log does not say that kubeconfig Secrets are imported")
		}
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "team"}}
	t.Run("an imported cluster is placed like any other", func(t *testing.T) {
		e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
		e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "imported", Namespace: "team"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "imported"}}}})
		e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "team"}, Data: map[string]string{"v": "1"}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg"}},
				PlacementRef:      flotillav1.PlacementRef{Name: "imported"},
			}})
		spoke := spokeClient(t, spokeA)
		fleettest.Eventually(t, wait, "configmap on spoke-a", func() error {
			return spoke.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		})
	})

	t.Run("rotated credentials re-engage the spoke with the new ones", func(t *testing.T) {
		token := serviceAccountToken(t, spokeA, "rotated")
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "spoke-a"}}
		e.update(t, s, func() {
			s.Data["kubeconfig"] = kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
				for name := range c.AuthInfos {
					c.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
				}
			})
		})
		e.probedAs(t, "spoke-a", "system:serviceaccount:default:rotated")
		e.cluster(t, "spoke-a", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		e.event(t, "flotilla-system", "spoke-a", sources.ReasonImported)
		if strings.Contains(logs.String(), token) {
			t.Fatal("the token appears in the controller's logs")
		}
	})

	t.Run("an exec-plugin kubeconfig gives a clear condition and runs nothing", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "ran")
		e.create(t, secret("flotilla-system", "exec", kubeconfigLabel, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
			for name := range c.AuthInfos {
				c.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
					APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh", Args: []string{"-c", "touch " + marker},
					InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
				}}
			}
		})}))
		c := e.cluster(t, "exec", ready(metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid))
		if c.Labels[flotillav1.LabelClusterID] != "" {
			t.Errorf("an unidentified spoke has an identity: %v", c.Labels)
		}
		msg := e.event(t, "flotilla-system", "exec", sources.ReasonKubeconfigRefused)
		if !strings.Contains(msg, "exec plugin") {
			t.Errorf("event message %q does not name the exec plugin", msg)
		}
		fleettest.Consistently(t, 2*time.Second, "nothing engaged, nothing run", func() error {
			if _, err := os.Stat(marker); err == nil {
				return fmt.Errorf("the exec plugin ran")
			}
			return ready(metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid)(e.cluster(t, "exec", nil))
		})
	})

	t.Run("a spoke that cannot be identified is not imported yet", func(t *testing.T) {
		e.create(t, secret("flotilla-system", "nowhere", kubeconfigLabel, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, func(c *clientcmdapi.Config) {
			for _, cl := range c.Clusters {
				cl.Server = "https://127.0.0.1:1"
			}
		})}))
		msg := e.event(t, "flotilla-system", "nowhere", sources.ReasonUnidentified)
		if !strings.Contains(msg, "kube-system") {
			t.Errorf("event message %q", msg)
		}
		e.absent(t, "nowhere", 2*time.Second)
	})

	t.Run("the same spoke from two sources is engaged once and reported", func(t *testing.T) {
		e.create(t, secret("flotilla-system", "spoke-a-again", kubeconfigLabel, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeA, nil)}))
		msg := e.event(t, "flotilla-system", "spoke-a-again", sources.ReasonDuplicateCluster)
		if !strings.Contains(msg, "Cluster spoke-a") || !strings.Contains(msg, idA) {
			t.Errorf("event message %q does not name the Cluster and identity", msg)
		}
		e.absent(t, "spoke-a-again", 2*time.Second)

		// A joined spoke keeps its Cluster; the import waits, and takes over when it goes.
		if err := membership.Join(ctx, e.hub, membership.JoinOptions{Name: "joined-b", Spoke: spokeB.RESTConfig()}); err != nil {
			t.Fatal(err)
		}
		e.create(t, secret("flotilla-system", "b-import", kubeconfigLabel, map[string][]byte{"kubeconfig": kubeconfigOf(t, spokeB, nil)}))
		e.event(t, "flotilla-system", "b-import", sources.ReasonDuplicateCluster)
		e.event(t, "default", "joined-b", sources.ReasonDuplicateCluster)
		e.absent(t, "b-import", 2*time.Second)
		if err := e.hub.Delete(ctx, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "joined-b"}}); err != nil {
			t.Fatal(err)
		}
		c := e.cluster(t, "b-import", ready(metav1.ConditionTrue, flotillav1.ReasonProbed))
		if c.Labels[flotillav1.LabelClusterID] != idB {
			t.Errorf("identity %q, want %q", c.Labels[flotillav1.LabelClusterID], idB)
		}
	})

	t.Run("a steady fleet costs no importer writes", func(t *testing.T) {
		before := e.importerWrites(t)
		fleettest.Consistently(t, 3*time.Second, "no importer writes", func() error {
			if n := e.importerWrites(t); n != before {
				return fmt.Errorf("%d importer writes to the hub in steady state", n-before)
			}
			return nil
		})
	})

	t.Run("deleting the source disconnects the spoke and deletes nothing on it", func(t *testing.T) {
		if err := e.hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "spoke-a"}}); err != nil {
			t.Fatal(err)
		}
		e.gone(t, "spoke-a")
		fleettest.Eventually(t, wait, "credentials secret deleted", func() error {
			err := e.hub.Get(ctx, client.ObjectKey{Namespace: "flotilla-system", Name: "spoke-a-imported-kubeconfig"}, &corev1.Secret{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
		if err := spokeClient(t, spokeA).Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("the delivered ConfigMap is gone from the spoke: %v", err)
		}
		deletes := func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" || ev.Verb == "deletecollection" }
		if d := e.flotillaWrites(t, "spoke-a", deletes); len(d) > 0 {
			t.Fatalf("Flotilla deleted on the spoke: %v", d)
		}
		// The spoke stays untouched after the disconnect.
		fleettest.Consistently(t, 2*time.Second, "no deletes on the spoke", func() error {
			if d := e.flotillaWrites(t, "spoke-a", deletes); len(d) > 0 {
				return fmt.Errorf("Flotilla deleted on the spoke: %v", d)
			}
			return nil
		})
		// The exec Secret (same spoke address, refused) is untouched by the other's deletion.
		e.cluster(t, "exec", nil)
	})
}

func spokeClient(t *testing.T, p *localfleet.Plane) client.Client {
	t.Helper()
	c, err := client.New(p.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func kubeSystemUID(t *testing.T, p *localfleet.Plane) string {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := spokeClient(t, p).Get(context.Background(), client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}

// serviceAccountToken creates a cluster-admin ServiceAccount in the spoke's default namespace
// and returns a token for it.
func serviceAccountToken(t *testing.T, p *localfleet.Plane, name string) string {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(p.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
