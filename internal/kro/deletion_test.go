package kro

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An ACTIVE instance that is deleted lists its resources' kinds in its inventory; its status
// becomes DELETING with ResourcesReady Unknown, keeping its status fields.
func TestDeletion(t *testing.T) {
	_, _, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})
	now := metav1.Now()
	instance.SetDeletionTimestamp(&now)

	kinds, err := DeletionInventory(instance)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Service"}, {Group: "apps", Kind: "Deployment"}}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("inventory %v, want %v", kinds, want)
	}

	status := DeletingStatus(instance, false, nil)
	if status["state"] != StateDeleting || status["serviceName"] != "shop" {
		t.Errorf("status %v, want DELETING with the status fields kept", status)
	}
	rr := condition(status, "ResourcesReady")
	if rr["status"] != "Unknown" || rr["reason"] != "UnderDeletion" || rr["message"] != "deleting resources" {
		t.Errorf("ResourcesReady = %v", rr)
	}
	if ready := condition(status, "Ready"); ready["status"] != "Unknown" {
		t.Errorf("Ready = %v", ready)
	}
	// Computed again from what was written, it is the same: nothing is written twice.
	instance.Object["status"] = status
	if again := DeletingStatus(instance, false, nil); !reflect.DeepEqual(again, status) {
		t.Errorf("deletion status changes from pass to pass:\n%v\n%v", again, status)
	}

	blocked := DeletingStatus(instance, false, errTest("no"))
	if msg, _ := condition(blocked, "ResourcesReady")["message"].(string); !strings.Contains(msg, "deletion blocked: no") {
		t.Errorf("blocked message %q", msg)
	}

	// An inventory tampered with is refused, not guessed around.
	annotations := instance.GetAnnotations()
	annotations[ApplySetGroupKindsAnnotation] = "ConfigMap"
	instance.SetAnnotations(annotations)
	if _, err := DeletionInventory(instance); err == nil || !strings.Contains(err.Error(), "inventory") {
		t.Errorf("tampered inventory: %v", err)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// Hold keeps kro's condition shape: an ACTIVE pass held back is IN_PROGRESS with
// ResourcesReady and Ready False, the message given, and the other conditions as they were.
// Held again on what was written, nothing changes.
func TestHold(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})
	plan := evaluate(t, c, instance, world)
	plan.Hold(instance, StateInProgress, "awaiting delivery of deployment shop")
	if plan.State != StateInProgress || plan.Status["state"] != StateInProgress {
		t.Fatalf("state %s / %v", plan.State, plan.Status["state"])
	}
	rr := condition(plan.Status, "ResourcesReady")
	if rr["status"] != "False" || rr["reason"] != "NotReady" || rr["message"] != "awaiting delivery of deployment shop" {
		t.Errorf("ResourcesReady = %v", rr)
	}
	if ready := condition(plan.Status, "Ready"); ready["status"] != "False" {
		t.Errorf("Ready = %v", ready)
	}
	for _, ct := range []string{"InstanceManaged", "GraphResolved"} {
		if cond := condition(plan.Status, ct); cond["status"] != "True" {
			t.Errorf("%s = %v", ct, cond)
		}
	}
	held := instance.DeepCopy()
	held.Object["status"] = plan.Status
	again := evaluate(t, c, held, world)
	again.Hold(held, StateInProgress, "awaiting delivery of deployment shop")
	if !reflect.DeepEqual(again.Status, plan.Status) {
		t.Errorf("a held status changes from pass to pass:\n%v\n%v", again.Status, plan.Status)
	}
}
