package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// TestPlanAndDiffMaskSecretValues runs plan and diff against a spoke where a delivered Secret
// has one key changed and one added, and a ConfigMap has one key changed. No Secret value, as
// stored (base64) or decoded, may appear in the output; ConfigMap values still do.
func TestPlanAndDiffMaskSecretValues(t *testing.T) {
	owner := render.Owner{Kind: "Propagation", Namespace: "shop", Name: "web"}
	meta := func(name, hash string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: name,
			Labels:      map[string]string{flotillav1.LabelManagedBy: flotillav1.ManagedByValue, flotillav1.LabelOwner: owner.LabelValue()},
			Annotations: map[string]string{flotillav1.AnnotationOwner: owner.String(), flotillav1.AnnotationHash: hash}}
	}
	liveSecret := &corev1.Secret{ObjectMeta: meta("db", "old"), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"password": []byte("old-canary-password"), "user": []byte("app")}}
	liveEmpty := &corev1.Secret{ObjectMeta: meta("fresh", "old"), Type: corev1.SecretTypeOpaque}
	liveConfig := &corev1.ConfigMap{ObjectMeta: meta("settings", "old"), Data: map[string]string{"mode": "slow"}}

	object := func(kind, name string, fields map[string]any) *unstructured.Unstructured {
		m := meta(name, "new")
		u := &unstructured.Unstructured{Object: fields}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetNamespace(m.Namespace)
		u.SetName(m.Name)
		u.SetLabels(m.Labels)
		u.SetAnnotations(m.Annotations)
		return u
	}
	desired := []*unstructured.Unstructured{
		object("Secret", "db", map[string]any{"type": "Opaque", "data": map[string]any{
			"password": b64("new-canary-password"), "user": b64("app"), "token": b64("added-canary-token")}}),
		object("Secret", "fresh", map[string]any{"type": "Opaque",
			"data": map[string]any{"key": b64("fresh-canary-key")}, "stringData": map[string]any{"note": "string-canary-note"}}),
		object("ConfigMap", "settings", map[string]any{"data": map[string]any{"mode": "fast"}}),
	}
	canaries := []string{"old-canary-password", "new-canary-password", "added-canary-token", "fresh-canary-key", "string-canary-note"}

	// The fake cannot dry-run a server-side apply: answer with the object sent, as a spoke
	// whose defaults change nothing would.
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Secret", "ConfigMap"} {
		mapper.Add(corev1.SchemeGroupVersion.WithKind(kind), apimeta.RESTScopeNamespace)
	}
	spoke := fake.NewClientBuilder().WithScheme(install.Scheme()).WithRESTMapper(mapper).WithObjects(liveSecret, liveEmpty, liveConfig).
		WithInterceptorFuncs(interceptor.Funcs{Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return nil
		}}).Build()
	d := &plan.Desired{Owner: owner, Prune: true}
	cd := plan.ClusterDesired{Cluster: "eu-1", Objects: desired, Revision: "r1"}
	ctx := context.Background()

	var planOut, diffOut bytes.Buffer
	if err := printPlan(&planOut, []plan.Cluster{plan.ForCluster(ctx, spoke, d, cd)}); err != nil {
		t.Fatal(err)
	}
	if err := printDiff(&diffOut, []plan.Cluster{plan.DriftOf(ctx, spoke, d, cd)}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"plan": planOut.String(), "diff": diffOut.String()} {
		for _, c := range canaries {
			if strings.Contains(out, c) || strings.Contains(out, b64(c)) {
				t.Errorf("%s output shows the Secret value %q:\n%s", name, c, out)
			}
		}
		for _, want := range []string{
			"/data/password: *** (before) → *** (after)",
			"/data/token: (none) → ***",
			`/data/mode: "slow" → "fast"`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
	if want := "/data: (none) → map[key:***]"; !strings.Contains(planOut.String(), want) {
		t.Errorf("plan output lacks %q:\n%s", want, planOut.String())
	}
	if t.Failed() {
		return
	}
	t.Logf("plan:\n%s\ndiff:\n%s", planOut.String(), diffOut.String())
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
