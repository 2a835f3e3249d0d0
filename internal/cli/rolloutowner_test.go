package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// rolloutEvent is an Event a rollout of obj reported, at an age.
func rolloutEvent(obj client.Object, kind, name string, phase flotillav1.RolloutPhase, msg string, age time.Duration) *corev1.Event {
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(time.Now().Add(-age).Truncate(time.Second))},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()},
		Reason:         "Rollout" + string(phase), Message: msg, LastTimestamp: metav1.NewTime(time.Now().Add(-age))}
}

// ownersHub is a hub with an owner of each kind: a transparent Deployment waiting for approval
// (its Events say so; an Event of an earlier object of the same name says otherwise), an RGD
// halted (its Events), served by an APIPropagation whose Placement has a rollout, with kept
// revisions, and a ClusterPropagation complete (status.rollout).
func ownersHub(t *testing.T) client.WithWatch {
	t.Helper()
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u-web", Generation: 3,
		Labels: map[string]string{flotillav1.LabelPlacement: "staged"}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptrTo(int32(2))},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 4, UpdatedReplicas: 2, ReadyReplicas: 4, AvailableReplicas: 4}}
	earlier := web.DeepCopy()
	earlier.UID = "u-gone"
	rgd := &kro.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "webapp", UID: "u-rgd"}}
	apis := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "apis"}, Spec: flotillav1.APIPropagationSpec{
		ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{"webapp"}},
		PlacementRef:             flotillav1.PlacementRef{Namespace: membership.Namespace, Name: "apis"}}}
	cp := &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "crds"},
		Status: flotillav1.PropagationStatus{Rollout: &flotillav1.RolloutStatus{Revision: "clusterpropagation.crds.abc", Phase: flotillav1.RolloutComplete,
			Message: "every cluster runs it", Stages: []flotillav1.RolloutStageStatus{{Name: "rest", Clusters: 2, Done: 2}}}}}
	objs := []client.Object{web, rgd, apis, cp,
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "staged"}, Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{
			Stages: []flotillav1.RolloutStage{{Name: "first"}, {Name: "second", Approval: flotillav1.ApprovalRequired}}}}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: "apis"}, Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{}}},
		rolloutEvent(web, "Deployment", "web.1", flotillav1.RolloutProgressing, "revision web-v2: stage first is under way", time.Minute),
		rolloutEvent(web, "Deployment", "web.2", flotillav1.RolloutWaitingForApproval,
			"revision web-v2: stage second waits for approval: flotilla rollout approve, or kubectl annotate the owner flotilla.dev/approve=second@web-v2", 30*time.Second),
		rolloutEvent(earlier, "Deployment", "web.3", flotillav1.RolloutHalted, "revision web-v0: a: not Ready within 5s", time.Second),
		rolloutEvent(rgd, "ResourceGraphDefinition", "webapp.1", flotillav1.RolloutHalted, "revision rgd-v3: a: not Ready within 10m0s", time.Second),
	}
	objs = append(objs, ownerRevisions(render.Owner{Kind: fleetapi.OwnerKind, Name: "webapp"}, "rgd-v1", "rgd-v2", "rgd-v3")...)
	objs = append(objs, ownerRevisions(render.Owner{Kind: "Deployment.apps", Namespace: "shop", Name: "web"}, "web-v1", "web-v2")...)
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), apimeta.RESTScopeNamespace)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), apimeta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Event"), apimeta.RESTScopeNamespace)
	mapper.Add(kro.GroupVersion.WithKind("ResourceGraphDefinition"), apimeta.RESTScopeRoot)
	for _, k := range []string{"Placement", "Propagation"} {
		mapper.Add(flotillav1.GroupVersion.WithKind(k), apimeta.RESTScopeNamespace)
	}
	for _, k := range []string{"APIPropagation", "ClusterPropagation"} {
		mapper.Add(flotillav1.GroupVersion.WithKind(k), apimeta.RESTScopeRoot)
	}
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithRESTMapper(mapper).WithObjects(objs...).
		WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string { return []string{o.(*corev1.Event).InvolvedObject.Name} }).
		Build()
}

// ownerRevisions are owner's kept revisions (ControllerRevisions), oldest first.
func ownerRevisions(owner render.Owner, names ...string) []client.Object {
	ns := owner.Namespace
	if ns == "" {
		ns = membership.Namespace
	}
	var out []client.Object
	for n, name := range names {
		out = append(out, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:      map[string]string{flotillav1.LabelOwner: owner.LabelValue()},
			Annotations: map[string]string{"flotilla.dev/revision-number": fmt.Sprint(n + 1)}}, Revision: int64(n + 1)})
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// TestRolloutOfEveryOwnerKind: status, approve, undo, history and pause take a transparent
// Deployment, an RGD and a ClusterPropagation as they take a Propagation, each read and
// steered where its kind keeps its rollout.
func TestRolloutOfEveryOwnerKind(t *testing.T) {
	hub := ownersHub(t)
	ctx := context.Background()
	out, err := run(t, hub, "rollout", "status", "deployment/web", "-n", "shop")
	for _, want := range []string{"Deployment shop/web: revision web-v2 WaitingForApproval", "from its latest RolloutWaitingForApproval Event",
		"2/2 replicas updated (on the clusters the rollout reached), 4 ready, 4 available, 4 in all"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("status of a transparent Deployment: error %v, output lacks %q:\n%s", err, want, out)
		}
	}
	if _, err := run(t, hub, "rollout", "approve", "deploy/web", "-n", "shop"); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, d); err != nil || d.Annotations[flotillav1.AnnotationApprove] != "second@web-v2" {
		t.Errorf("approve of a transparent Deployment wrote %v (%v), want second@web-v2", d.Annotations, err)
	}
	if out, err := run(t, hub, "rollout", "pause", "deployment/web", "-n", "shop"); err != nil || !strings.Contains(out, "kubectl rollout pause") {
		t.Errorf("pause of a transparent Deployment: %v, %q", err, out)
	}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, d); err != nil || !d.Spec.Paused {
		t.Errorf("pause of a transparent Deployment left spec.paused %t (%v)", d.Spec.Paused, err)
	}

	out, err = run(t, hub, "rollout", "status", "rgd/webapp")
	var exit ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(out, "revision rgd-v3 Halted: a: not Ready") || !strings.Contains(out, "RolloutHalted Event") {
		t.Errorf("status of a halted RGD rollout: %v, want exit status 1, output:\n%s", err, out)
	}
	if _, err := run(t, hub, "rollout", "undo", "resourcegraphdefinition/webapp"); err != nil {
		t.Fatal(err)
	}
	rgd := &kro.ResourceGraphDefinition{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "webapp"}, rgd); err != nil || rgd.Annotations[flotillav1.AnnotationUndo] != "rgd-v2@rgd-v3" {
		t.Errorf("undo of an RGD wrote %v (%v), want rgd-v2@rgd-v3 on the RGD", rgd.Annotations, err)
	}
	out, err = run(t, hub, "rollout", "history", "rgd/webapp")
	if err != nil || !strings.Contains(out, "rgd-v2") || !strings.Contains(out, "undo target") || !strings.Contains(out, "latest (Halted)") {
		t.Errorf("history of an RGD: %v, output:\n%s", err, out)
	}
	if _, err := run(t, hub, "rollout", "pause", "rgd/webapp"); err != nil {
		t.Fatal(err)
	}
	pl := &flotillav1.Placement{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: "apis"}, pl); err != nil || !pl.Spec.Rollout.Paused {
		t.Errorf("pause of an RGD left its APIPropagation's Placement %+v (%v)", pl.Spec.Rollout, err)
	}

	out, err = run(t, hub, "rollout", "status", "fcprop/crds", "--watch")
	if err != nil || !strings.Contains(out, "ClusterPropagation crds: revision clusterpropagation.crds.abc Complete") || !strings.Contains(out, "(from status.rollout)") {
		t.Errorf("status of a ClusterPropagation: %v, output:\n%s", err, out)
	}
	_, err = run(t, hub, "rollout", "status", "apipropagation/apis")
	wantUsage(t, err, "rgd/NAME")
	_, err = run(t, hub, "rollout", "status", "deployment/missing", "-n", "shop")
	wantError(t, err, "deployment shop/missing not found", "kubectl get deployments -n shop")
}
