package inventory_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

const (
	expiryMetric        = "flotilla_cluster_credential_expiry_seconds"
	inFlightLimitMetric = "flotilla_spoke_in_flight_limit"
)

// TestTokenRenewal joins a spoke with the shortest token lifetime the API server allows (10
// minutes) to a hub that renews tokens when 99% of their lifetime is left, that is six seconds
// after they are issued: the hub renews the token through the spoke's TokenRequest API, writes
// it into the credentials Secret, and the Cluster stays Ready throughout.
func TestTokenRenewal(t *testing.T) {
	e := startEnvWith(t, inventory.Options{ProbeInterval: probeInterval, ProbeTimeout: 400 * time.Millisecond, RenewWhenRemaining: 0.99}, "spoke-a")
	ctx := context.Background()
	spokeCfg := e.fleet.Plane("spoke-a").RESTConfig()
	if err := membership.Join(ctx, e.hub, membership.JoinOptions{Name: "eu-1", Spoke: spokeCfg, TokenLifetime: membership.MinTokenLifetime}); err != nil {
		t.Fatal(err)
	}
	storedToken := func() (string, error) {
		secret := &corev1.Secret{}
		if err := e.hub.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.SecretName("eu-1")}, secret); err != nil {
			return "", err
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["kubeconfig"])
		if err != nil {
			return "", err
		}
		return cfg.BearerToken, nil
	}
	joined, err := storedToken()
	if err != nil {
		t.Fatal(err)
	}
	ready := e.waitReady(t, "eu-1", metav1.ConditionTrue, flotillav1.ReasonProbed, 30*time.Second)
	readySince := meta.FindStatusCondition(ready.Status.Conditions, flotillav1.ClusterReady).LastTransitionTime

	var renewed string
	fleettest.Eventually(t, 30*time.Second, "the hub renewed the token in the credentials Secret", func() error {
		tok, err := storedToken()
		if err != nil {
			return err
		}
		if tok == joined {
			return errors.New("still the token join stored")
		}
		renewed = tok
		return nil
	})
	fleettest.Eventually(t, 30*time.Second, "eu-1 CredentialsValid=True/Renewed", func() error {
		c := &flotillav1.Cluster{}
		if err := e.hub.Get(ctx, client.ObjectKey{Name: "eu-1"}, c); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterCredentialsValid)
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != flotillav1.ReasonRenewed {
			return fmt.Errorf("CredentialsValid: %+v", cond)
		}
		return nil
	})

	t.Run("the renewed token is Flotilla's and bound to the same spoke Secret", func(t *testing.T) {
		admin, err := kubernetes.NewForConfig(spokeCfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: renewed}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Status.Authenticated || r.Status.User.Username != "system:serviceaccount:flotilla-system:flotilla" {
			t.Fatalf("renewed token: authenticated=%t user %q", r.Status.Authenticated, r.Status.User.Username)
		}
		joinedSecret, renewedSecret := boundSecret(t, joined), boundSecret(t, renewed)
		if joinedSecret == "" || joinedSecret != renewedSecret {
			t.Fatalf("bound to %q, join's token to %q", renewedSecret, joinedSecret)
		}
	})

	t.Run("the cluster stayed Ready", func(t *testing.T) {
		c := e.waitReady(t, "eu-1", metav1.ConditionTrue, flotillav1.ReasonProbed, time.Second)
		if since := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady).LastTransitionTime; !since.Equal(&readySince) {
			t.Fatalf("Ready changed at %s during renewal (was True since %s)", since, readySince)
		}
	})

	t.Run("the seconds to expiry are exported", func(t *testing.T) {
		v, ok := gauge(t, expiryMetric, "eu-1")
		if !ok || v <= 0 || v > membership.MinTokenLifetime.Seconds() {
			t.Fatalf("%s{cluster=eu-1} = %v (present %t), want within (0, 600]", expiryMetric, v, ok)
		}
	})

	t.Run("no token appears in logs or Events", func(t *testing.T) {
		for _, tok := range []string{joined, renewed} {
			if strings.Contains(logs.String(), tok) {
				t.Error("a token appears in the controller's logs")
			}
		}
		var events corev1.EventList
		if err := e.hub.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events.Items {
			if strings.Contains(ev.Message, joined[len(joined)-40:]) || strings.Contains(ev.Message, renewed[len(renewed)-40:]) {
				t.Errorf("Event %s carries a token", ev.Name)
			}
		}
	})

	t.Run("the metrics go with the cluster", func(t *testing.T) {
		if v, ok := gauge(t, inFlightLimitMetric, "eu-1"); !ok || v < 1 {
			t.Fatalf("%s{cluster=eu-1} = %v (present %t), want a positive in-flight limit", inFlightLimitMetric, v, ok)
		}
		if err := e.hub.Delete(ctx, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 10*time.Second, "no expiry or flow-control series for a removed cluster", func() error {
			for _, name := range []string{expiryMetric, inFlightLimitMetric} {
				if _, ok := gauge(t, name, "eu-1"); ok {
					return errors.New(name + " still exported")
				}
			}
			return nil
		})
	})
}

// gauge reads a gauge's value for a cluster from the controller's metrics registry.
func gauge(t *testing.T, name, cluster string) (float64, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// boundSecret returns the name of the Secret a ServiceAccount token is bound to.
func boundSecret(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatal("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Kubernetes struct {
			Secret struct {
				Name string `json:"name"`
			} `json:"secret"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.Kubernetes.Secret.Name
}
