package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// widgetCRD returns a Widget CRD whose spec.name is at most maxLength characters.
func widgetCRD(maxLength int64) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets", Singular: "widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"name": {Type: "string", MaxLength: &maxLength}}}}}}}},
		},
	}
}

func waitEstablished(t *testing.T, c client.Client) {
	t.Helper()
	fleettest.Eventually(t, wait, "widgets CRD established", func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: "widgets.example.com"}, crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not established")
	})
}

func (e *env) propagationCondition(t *testing.T, name, wantReason, wantMessage string) *flotillav1.Propagation {
	t.Helper()
	p := &flotillav1.Propagation{}
	fleettest.Eventually(t, wait, fmt.Sprintf("propagation %s %s %q", name, wantReason, wantMessage), func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, p); err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PropagationApplied)
		if c == nil || c.Reason != wantReason || !strings.Contains(c.Message, wantMessage) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	return p
}

func TestPropagationFailures(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}})

	t.Run("objects a spoke rejects fail there alone", func(t *testing.T) {
		// The hub accepts long names; spoke-a's Widget schema does not; spoke-b has no Widget kind.
		e.create(t, widgetCRD(100))
		if err := e.spokes["spoke-a"].Create(ctx, widgetCRD(3)); err != nil {
			t.Fatal(err)
		}
		waitEstablished(t, e.hub)
		waitEstablished(t, e.spokes["spoke-a"])
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "team"}, "spec": map[string]any{"name": "too-long-for-spoke-a"}}}
		// Established is not yet served everywhere: the client's discovery may lag a moment.
		fleettest.Eventually(t, wait, "a Widget created on the hub", func() error {
			return e.hub.Create(ctx, w.DeepCopy())
		})
		e.create(t, configMap("plain", map[string]string{"app": "mixed"}, "x"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "mixed", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"}, ResourceSelectors: []flotillav1.ResourceSelector{
				{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "plain"}}}})
		p := e.propagationCondition(t, "mixed", flotillav1.ReasonApplyFailed, "2 of 2 clusters failed")
		byCluster := map[string]flotillav1.ClusterResult{}
		for _, r := range p.Status.ClusterResults {
			byCluster[r.Cluster] = r
		}
		if r := byCluster["spoke-a"]; r.Failed != 1 || r.Applied != 1 || !strings.Contains(r.Message, "widget.example.com team/w") || !strings.Contains(r.Message, "spec.name") {
			t.Errorf("spoke-a result %+v", r)
		}
		if r := byCluster["spoke-b"]; r.Failed != 1 || r.Applied != 1 || !strings.Contains(r.Message, "does not serve this kind") {
			t.Errorf("spoke-b result %+v", r)
		}
		for name, spoke := range e.spokes {
			e.onSpoke(t, name, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "team"}}, false, nil)
			_ = spoke
		}
	})

	t.Run("missing placement and empty placement say so", func(t *testing.T) {
		e.create(t, configMap("lonely", nil, "x"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "no-placement", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "nope"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "lonely"}}}})
		e.propagationCondition(t, "no-placement", flotillav1.ReasonPlacementNotFound, "team/nope does not exist")
		e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "mars", Namespace: "team"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "mars"}}}})
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "no-clusters", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "mars"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "lonely"}}}})
		e.propagationCondition(t, "no-clusters", flotillav1.ReasonNoClusters, "chooses no cluster")
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "cluster-scoped", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "team"}}}})
		e.propagationCondition(t, "cluster-scoped", flotillav1.ReasonInvalidSpec, "deliver it with a ClusterPropagation")
	})

	t.Run("two propagations of one object: the incumbent keeps it, the newcomer reports a conflict naming it, no flapping; the newcomer takes over when the incumbent lets go", func(t *testing.T) {
		e.create(t, configMap("shared", nil, "x"))
		claim := func(name string) {
			e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
				Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
					ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "shared"}}}})
		}
		// zeta comes first; alpha's name sorts first, which must not matter.
		claim("zeta")
		e.propagationCondition(t, "zeta", flotillav1.ReasonApplied, "")
		claim("alpha")
		e.propagationCondition(t, "alpha", flotillav1.ReasonConflict, "held by another owner (Propagation/team/zeta)")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "team"}}
		ownedBy := func(owner string) func() error {
			return func() error {
				if cm.Annotations[flotillav1.AnnotationOwner] != owner {
					return fmt.Errorf("owner %q, want %s", cm.Annotations[flotillav1.AnnotationOwner], owner)
				}
				return nil
			}
		}
		e.onSpoke(t, "spoke-a", cm, false, ownedBy("Propagation/team/zeta"))
		rv := cm.ResourceVersion
		before := e.writesTo(t, "spoke-a", "shared")
		// Both keep reconciling; alpha retries with backoff and must never write.
		fleettest.Consistently(t, 3*time.Second, "the shared object stays as zeta wrote it", func() error {
			if err := e.spokes["spoke-a"].Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil || cm.ResourceVersion != rv {
				return fmt.Errorf("changed (resourceVersion %s → %s, %v)", rv, cm.ResourceVersion, err)
			}
			if after := e.writesTo(t, "spoke-a", "shared"); after != before {
				return fmt.Errorf("%d writes to the spoke while two propagations disagreed", after-before)
			}
			return nil
		})
		// zeta lets go (it is deleted, which removes its objects): alpha gets the object at
		// once, not after the long retry of a permanent conflict.
		if err := e.hub.Delete(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "zeta", Namespace: "team"}}); err != nil {
			t.Fatal(err)
		}
		e.propagationCondition(t, "alpha", flotillav1.ReasonApplied, "")
		e.onSpoke(t, "spoke-a", cm, false, ownedBy("Propagation/team/alpha"))
	})

	t.Run("a stopped spoke catches up when it returns, and nothing is deleted meanwhile", func(t *testing.T) {
		since := time.Now()
		e.create(t, configMap("moving", map[string]string{"app": "moving"}, "v1"))
		e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "moving", Namespace: "team"},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "moving"}}}}}})
		e.applied(t, "moving", flotillav1.ReasonApplied, 2)
		spokeB := e.fleet.Plane("spoke-b")
		spokeB.Stop()
		hubCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "moving", Namespace: "team"}}
		e.updateHub(t, hubCM, func() { hubCM.Data["v"] = "v2" })
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "moving", Namespace: "team"}}
		e.onSpoke(t, "spoke-a", cm, false, func() error {
			if cm.Data["v"] != "v2" {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
		if err := spokeB.Start(ctx); err != nil {
			t.Fatal(err)
		}
		e.onSpoke(t, "spoke-b", cm, false, func() error {
			if cm.Data["v"] != "v2" {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
		e.applied(t, "moving", flotillav1.ReasonApplied, 2)
		events, err := spokeB.AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if ev.Verb == "delete" && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.StageTimestamp.After(since) {
				t.Errorf("Flotilla deleted %s %s/%s on spoke-b", ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name)
			}
		}
	})
}

// writesTo counts Flotilla's mutating requests to objects of this name on a plane.
func (e *env) writesTo(t *testing.T, plane, name string) int {
	return e.countWrites(t, plane, func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Name == name })
}

// TestForbiddenKind registers a cluster whose credentials may manage ConfigMaps but not
// Secrets: the Secret fails there with a message naming it, the ConfigMap is delivered.
func TestForbiddenKind(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	spoke := e.fleet.Plane("spoke-a")
	admin := e.spokes["spoke-a"]
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "limited"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "limited", Namespace: "limited"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces", "nodes"}, Verbs: []string{"get", "list", "watch", "create"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "limited"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "limited", Namespace: "limited"}}},
	} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := kubernetes.NewForConfig(spoke.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("limited").CreateToken(ctx, "limited", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(spoke.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		a.ClientCertificateData, a.ClientKeyData, a.Token = nil, nil, tr.Status.Token
	}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	e.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "limited-kubeconfig", Namespace: "flotilla-system"}, Data: map[string][]byte{"kubeconfig": data}})
	e.create(t, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "limited", Labels: map[string]string{"access": "limited"}},
		Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{Namespace: "flotilla-system", Name: "limited-kubeconfig", Key: "kubeconfig"}}})

	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "limited", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterNames: []string{"limited"}}})
	e.create(t, configMap("allowed", map[string]string{"app": "rbac"}, "x"))
	e.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "denied", Namespace: "team", Labels: map[string]string{"app": "rbac"}}, StringData: map[string]string{"k": "v"}})
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "rbac", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "limited"}, ResourceSelectors: []flotillav1.ResourceSelector{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "allowed"}, {APIVersion: "v1", Kind: "Secret", Name: "denied"}}}})

	p := e.propagationCondition(t, "rbac", flotillav1.ReasonApplyFailed, "secret team/denied")
	fleettest.Eventually(t, wait, "a Warning Event on the Propagation", func() error {
		var events corev1.EventList
		if err := e.hub.List(ctx, &events, client.InNamespace("team")); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "rbac" && ev.Type == corev1.EventTypeWarning && ev.Reason == flotillav1.ReasonApplyFailed {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(events.Items))
	})
	r := p.Status.ClusterResults[0]
	if r.Applied != 1 || r.Failed != 1 || !strings.Contains(r.Message, "forbidden") {
		t.Fatalf("result %+v", r)
	}
	e.onSpoke(t, "spoke-a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed", Namespace: "team"}}, false, nil)
}

// TestObjectTooLargeForASpoke delivers an object that the hub stores but a spoke, whose etcd
// takes smaller requests, refuses: the failure names the object on that spoke alone.
func TestObjectTooLargeForASpoke(t *testing.T) {
	small := func(s *localfleet.PlaneSpec) {
		if s.Name == "small" {
			s.ExtraEtcdArgs = []string{"--max-request-bytes=262144"}
		}
	}
	e := startEnv(t, map[string]string{"small": "eu", "large": "eu"}, small)
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	e.create(t, configMap("big", map[string]string{"app": "size"}, strings.Repeat("x", 512*1024)))
	e.create(t, configMap("tiny", map[string]string{"app": "size"}, "x"))
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "size", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"}, ResourceSelectors: []flotillav1.ResourceSelector{
			{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "size"}}}}}})
	p := e.propagationCondition(t, "size", flotillav1.ReasonApplyFailed, "small: configmap team/big")
	for _, r := range p.Status.ClusterResults {
		switch r.Cluster {
		case "small":
			if r.Applied != 1 || r.Failed != 1 || !strings.Contains(r.Message, "too large") {
				t.Errorf("small: %+v", r)
			}
		case "large":
			if r.Applied != 2 || r.Failed != 0 {
				t.Errorf("large: %+v", r)
			}
		}
	}
	e.onSpoke(t, "small", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tiny", Namespace: "team"}}, false, nil)
}

// TestUnwatchableKind: a Propagation that selects a kind the hub can never watch (v1 Binding
// is create-only) gets InvalidSpec naming it, and the controller carries on with the others.
func TestUnwatchableKind(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}})
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "bindings", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "Binding"}}}})
	e.propagationCondition(t, "bindings", flotillav1.ReasonInvalidSpec, "v1 Binding cannot be watched")

	e.create(t, configMap("after", nil, "x"))
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "after"}}}})
	e.applied(t, "after", flotillav1.ReasonApplied, 1)
	e.onSpoke(t, "spoke-a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "team"}}, false, nil)
}
