package clusterwork_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// canary is Secret data on the hub: the agent of a cluster the Secret goes to gets it, and no
// log line holds it.
const canary = "canary-agent-s3cr3t-f1071lla"

const wait = 2 * time.Minute

// protection is how long the test's work endpoint believes its look at the Delivery policy.
const protection = 2 * time.Second

// logs captures what the hub controller logs in this test binary, at its most verbose.
var logs fleettest.SyncBuffer

func TestMain(m *testing.M) {
	var w io.Writer = &logs
	if os.Getenv(fleettest.LogEnv) != "" {
		w = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}

// TestAgentsReadTheirOwnWork runs the hub controller with its work endpoint, a Propagation
// delivering a ConfigMap and a Secret to spokes a and b, and asks the endpoint as each
// cluster's agent and as others. The hub keeps Delivery records to its controller (the policy
// hubtest.Install installs for the user the controller runs as), until the last case deletes
// the policy.
func TestAgentsReadTheirOwnWork(t *testing.T) {
	ctx := context.Background()
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("a"), fleettest.APIOnlySpoke("b"))
	// The Delivery policy, for the user the controller runs as (hubtest.Run: the hub's admin).
	hubc := hubtest.Install(t, fleet)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := hubc.Get(ctx, client.ObjectKey{Name: install.DeliveryPolicyName}, policy); err != nil {
		t.Fatalf("the hub has no Delivery policy: %v", err)
	}
	urls := make(chan string, 1)
	hubtest.Run(t, fleet, func(o *hub.Options) {
		o.WorkAddr, o.WorkReady = "127.0.0.1:0", func(url string) { urls <- url }
		o.WorkProtectionInterval = protection
	})
	for _, name := range []string{"a", "b"} {
		if err := membership.Join(ctx, hubc, membership.JoinOptions{Name: name, Spoke: fleet.Plane(name).RESTConfig()}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(obj client.Object) {
		t.Helper()
		if err := hubc.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	create(&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}, Data: map[string]string{"v": "v1"}}
	create(settings)
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "team"}, Data: map[string][]byte{"password": []byte(canary)}})
	create(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"}, ResourceSelectors: []flotillav1.ResourceSelector{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}, {APIVersion: "v1", Kind: "Secret", Name: "creds"}}}})

	// The identities: each cluster's agent, and a user who may view the owner's namespace.
	for _, name := range []string{"a", "b"} {
		if _, err := membership.GrantAgent(ctx, hubc, name); err != nil {
			t.Fatal(err)
		}
	}
	create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer", Namespace: "team"}})
	fleettest.Grant(t, ctx, hubc, "team", "system:serviceaccount:team:viewer", "view")
	cs, err := kubernetes.NewForConfig(fleet.Hub().RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	token := func(namespace, name string, audiences ...string) string {
		t.Helper()
		tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("token for %s/%s: %v", namespace, name, err)
		}
		return tr.Status.Token
	}
	agentA := token(membership.Namespace, "agent-a", clusterwork.Audience)
	agentB := token(membership.Namespace, "agent-b", clusterwork.Audience)
	viewer := token("team", "viewer", clusterwork.Audience)
	agentAForHub := token(membership.Namespace, "agent-a") // the hub API server's audience

	var base string
	select {
	case base = <-urls:
	case <-time.After(wait):
		t.Fatal("the work endpoint never listened")
	}
	get := func(cluster, token, etag string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/clusters/"+cluster+"/work", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	records := recordsOf(t, hubc)

	// work waits until cluster's agent is served the record's current work, whole, and
	// returns it with its ETag.
	work := func(cluster, token string, check func(clusterwork.Item) error) (clusterwork.Item, string) {
		t.Helper()
		var got clusterwork.Item
		var etag string
		fleettest.Eventually(t, wait, cluster+"'s agent is served its work", func() error {
			rec, ok := records()[cluster]
			if !ok || rec.Spec.Work == nil {
				return fmt.Errorf("no record with work for %s yet", cluster)
			}
			res, body := get(cluster, token, "")
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d: %s", res.StatusCode, body)
			}
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				return fmt.Errorf("Cache-Control %q", cc)
			}
			var w clusterwork.Work
			if err := json.Unmarshal(body, &w); err != nil {
				return err
			}
			if w.Cluster != cluster || len(w.Items) != 1 {
				return fmt.Errorf("work of %q with %d items, want %s's one", w.Cluster, len(w.Items), cluster)
			}
			got, etag = w.Items[0], res.Header.Get("ETag")
			switch {
			case got.Pending != "":
				return fmt.Errorf("pending: %s", got.Pending)
			case got.Revision != rec.Spec.Work.Revision || got.Digest != rec.Spec.Work.Digest:
				return fmt.Errorf("revision %s digest %s, the record says %s %s", got.Revision, got.Digest, rec.Spec.Work.Revision, rec.Spec.Work.Digest)
			case got.Record != rec.Namespace+"/"+rec.Name || got.Owner.Name != "work" || got.Owner.Kind != "Propagation":
				return fmt.Errorf("record %s of owner %+v", got.Record, got.Owner)
			case etag == "":
				return fmt.Errorf("no ETag")
			}
			return check(got)
		})
		return got, etag
	}
	hasObjects := func(value string) func(clusterwork.Item) error {
		return func(it clusterwork.Item) error {
			var cm, secret bool
			for _, o := range it.Objects {
				switch o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName() {
				case "ConfigMap/team/settings":
					v, _, _ := unstructured.NestedString(o.Object, "data", "v")
					cm = v == value
				case "Secret/team/creds":
					v, _, _ := unstructured.NestedString(o.Object, "data", "password")
					secret = v == encoded(canary)
				}
			}
			if !cm || !secret || len(it.Objects) != 2 {
				return fmt.Errorf("%d objects; ConfigMap with %s: %v, Secret with its data: %v", len(it.Objects), value, cm, secret)
			}
			return nil
		}
	}

	first, etagA := work("a", agentA, hasObjects("v1"))
	work("b", agentB, hasObjects("v1"))

	t.Run("others are refused", func(t *testing.T) {
		for _, c := range []struct {
			name, cluster, token string
			status               int
		}{
			{"no token", "a", "", http.StatusUnauthorized},
			{"a token that is no token", "a", "not-a-token", http.StatusUnauthorized},
			{"agent a's token for the hub API server", "a", agentAForHub, http.StatusUnauthorized},
			{"agent a asking for b's work", "b", agentA, http.StatusForbidden},
			{"agent b asking for a's work", "a", agentB, http.StatusForbidden},
			{"a viewer of the owner's namespace", "a", viewer, http.StatusForbidden},
			{"a cluster name that is no DNS label", "Not_A_Cluster", agentA, http.StatusBadRequest},
		} {
			res, body := get(c.cluster, c.token, "")
			if res.StatusCode != c.status {
				t.Errorf("%s: status %d (%s), want %d", c.name, res.StatusCode, body, c.status)
			}
			if strings.Contains(string(body), canary) || strings.Contains(string(body), encoded(canary)) {
				t.Errorf("%s: the refusal carries the Secret's data", c.name)
			}
		}
	})

	t.Run("a record the ledger did not write is not served", func(t *testing.T) {
		rec := records()["a"]
		forged := &flotillav1.Delivery{
			ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: "team", Labels: map[string]string{flotillav1.LabelCluster: "a"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: flotillav1.GroupVersion.String(), Kind: "Propagation", Name: "work", UID: "not-the-owners-uid"}}},
			Spec: flotillav1.DeliverySpec{Owner: rec.Spec.Owner, Cluster: "a", Work: rec.Spec.Work},
		}
		create(forged)
		defer func() { _ = hubc.Delete(ctx, forged) }()
		// Once the hub cache holds it, it would change the ETag if it were served.
		fleettest.Eventually(t, wait, "the hub cache holds the forged record", func() error {
			return hubc.Get(ctx, client.ObjectKeyFromObject(forged), &flotillav1.Delivery{})
		})
		fleettest.Consistently(t, 3*time.Second, "only the ledger's record is served", func() error {
			res, body := get("a", agentA, "")
			var w clusterwork.Work
			if err := json.Unmarshal(body, &w); err != nil {
				return fmt.Errorf("status %d: %w", res.StatusCode, err)
			}
			for _, it := range w.Items {
				if it.Record == "team/forged" {
					return fmt.Errorf("the forged record is served")
				}
			}
			return nil
		})
	})

	t.Run("polls are answered 304 until the work changes", func(t *testing.T) {
		for range 3 {
			if res, body := get("a", agentA, etagA); res.StatusCode != http.StatusNotModified || len(body) != 0 {
				t.Fatalf("poll with the current ETag: status %d, %d bytes", res.StatusCode, len(body))
			}
		}
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(settings), settings); err != nil {
			t.Fatal(err)
		}
		settings.Data["v"] = "v2"
		if err := hubc.Update(ctx, settings); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "a poll with the old ETag gets the new work", func() error {
			res, body := get("a", agentA, etagA)
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d", res.StatusCode)
			}
			var w clusterwork.Work
			if err := json.Unmarshal(body, &w); err != nil {
				return err
			}
			if len(w.Items) != 1 || w.Items[0].Revision == first.Revision {
				return fmt.Errorf("still revision %s", first.Revision)
			}
			return nil
		})
		second, etag := work("a", agentA, hasObjects("v2"))
		if second.Revision == first.Revision || etag == etagA {
			t.Fatalf("revision %s and ETag %s after the change, %s and %s before", second.Revision, etag, first.Revision, etagA)
		}
		if res, _ := get("a", agentA, etag); res.StatusCode != http.StatusNotModified {
			t.Errorf("poll with the new ETag: status %d", res.StatusCode)
		}
	})

	t.Run("a revoked agent is refused", func(t *testing.T) {
		if revoked, err := membership.RevokeAgent(ctx, hubc, "b"); err != nil || !revoked {
			t.Fatalf("RevokeAgent: %v, %v", revoked, err)
		}
		// Within the endpoint's memory of the hub's answer.
		fleettest.Eventually(t, clusterwork.CacheTTL+wait/4, "b's agent refused", func() error {
			if res, _ := get("b", agentB, ""); res.StatusCode != http.StatusUnauthorized {
				return fmt.Errorf("status %d", res.StatusCode)
			}
			return nil
		})
		if res, _ := get("a", agentA, ""); res.StatusCode != http.StatusOK {
			t.Errorf("a's agent after b's was revoked: status %d", res.StatusCode)
		}
	})

	t.Run("without the Delivery policy no work is served", func(t *testing.T) {
		if err := hubc.Delete(ctx, policy); err != nil {
			t.Fatal(err)
		}
		// Within the endpoint's interval (and a poll's margin).
		fleettest.Eventually(t, protection+10*time.Second, "a's agent refused", func() error {
			res, body := get("a", agentA, "")
			if res.StatusCode != http.StatusServiceUnavailable {
				return fmt.Errorf("status %d", res.StatusCode)
			}
			if !strings.Contains(string(body), "not protected") || !strings.Contains(string(body), install.DeliveryPolicyName) {
				return fmt.Errorf("the refusal says %q", body)
			}
			if strings.Contains(string(body), canary) || strings.Contains(string(body), encoded(canary)) {
				t.Fatal("the refusal carries the Secret's data")
			}
			return nil
		})
	})

	if strings.Contains(logs.String(), canary) || strings.Contains(logs.String(), encoded(canary)) {
		t.Error("the Secret's data is in the hub controller's logs")
	}
}

// recordsOf returns a function that reads the Propagation's Delivery records, by cluster.
func recordsOf(t *testing.T, hubc client.Client) func() map[string]flotillav1.Delivery {
	return func() map[string]flotillav1.Delivery {
		t.Helper()
		var list flotillav1.DeliveryList
		if err := hubc.List(context.Background(), &list, client.InNamespace("team")); err != nil {
			t.Fatal(err)
		}
		out := map[string]flotillav1.Delivery{}
		for _, rec := range list.Items {
			if rec.Spec.Owner.Name == "work" && rec.Name != "forged" {
				out[rec.Spec.Cluster] = rec
			}
		}
		return out
	}
}

// encoded is a Secret value as its data field holds it.
func encoded(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
