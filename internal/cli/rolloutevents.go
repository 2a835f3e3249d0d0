package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// rolloutPhases are the phases a Rollout<Phase> Event names.
var rolloutPhases = []flotillav1.RolloutPhase{flotillav1.RolloutProgressing, flotillav1.RolloutSoaking, flotillav1.RolloutWaitingForApproval,
	flotillav1.RolloutPaused, flotillav1.RolloutHalted, flotillav1.RolloutRolledBack, flotillav1.RolloutComplete}

// eventsNamespace is where the Events of an object are: its namespace, or for a
// cluster-scoped object (an RGD) default, where client-go's recorder puts them.
func eventsNamespace(obj client.Object) string {
	if obj.GetNamespace() != "" {
		return obj.GetNamespace()
	}
	return metav1.NamespaceDefault
}

// objectEvents lists the Events about obj (this very object: its UID).
func objectEvents(ctx context.Context, hub client.Reader, obj client.Object) (*corev1.EventList, []corev1.Event, error) {
	list := &corev1.EventList{}
	if err := hub.List(ctx, list, client.InNamespace(eventsNamespace(obj)), client.MatchingFields{"involvedObject.name": obj.GetName()}); err != nil {
		return nil, nil, fmt.Errorf("list the Events of %s: %w", obj.GetName(), err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.UID == obj.GetUID() {
			out = append(out, ev)
		}
	}
	return list, out, nil
}

// rolloutFromEvents is where an owner without a status of Flotilla's says its rollout stands:
// the latest of its Rollout<Phase> Events, "revision REV: MESSAGE".
func rolloutFromEvents(ctx context.Context, hub client.Reader, obj client.Object) (rolloutReport, error) {
	_, events, err := objectEvents(ctx, hub, obj)
	if err != nil {
		return rolloutReport{}, err
	}
	var latest *corev1.Event
	var phase flotillav1.RolloutPhase
	for i := range events {
		ev := &events[i]
		p, ok := eventPhase(ev.Reason)
		if ok && (latest == nil || !eventTime(ev).Before(eventTime(latest))) {
			latest, phase = ev, p
		}
	}
	if latest == nil {
		return rolloutReport{source: "its Events (none says Rollout*: nothing has rolled out since they expired)"}, nil
	}
	rev, msg, _ := strings.Cut(strings.TrimPrefix(latest.Message, "revision "), ": ")
	return rolloutReport{rollout: &flotillav1.RolloutStatus{Revision: rev, Phase: phase, Message: msg},
		source: fmt.Sprintf("its latest %s Event, at %s", latest.Reason, eventTime(latest).UTC().Format(time.RFC3339))}, nil
}

func eventPhase(reason string) (flotillav1.RolloutPhase, bool) {
	for _, p := range rolloutPhases {
		if reason == "Rollout"+string(p) {
			return p, true
		}
	}
	return "", false
}

// eventTime is when an Event last happened.
func eventTime(ev *corev1.Event) time.Time {
	t := ev.CreationTimestamp.Time
	for _, c := range []time.Time{ev.FirstTimestamp.Time, ev.LastTimestamp.Time, ev.EventTime.Time} {
		if c.After(t) {
			t = c
		}
	}
	if ev.Series != nil && ev.Series.LastObservedTime.After(t) {
		t = ev.Series.LastObservedTime.Time
	}
	return t
}

// waitingStage is the stage a rollout waits to be approved: from its stages (status.rollout)
// or, for an owner that reports in Events, the annotation its message asks for.
func waitingStage(r *flotillav1.RolloutStatus, stageOf func(*flotillav1.RolloutStatus) string) string {
	if s := stageOf(r); s != "" {
		return s
	}
	_, asked, found := strings.Cut(r.Message, flotillav1.AnnotationApprove+"=")
	if !found {
		return ""
	}
	stage, _, _ := strings.Cut(asked, "@")
	return stage
}

// waitForChange returns once the owner's object or its Events change on the hub (or after a
// minute, to look again).
func waitForChange(ctx context.Context, hub client.WithWatch, o rolloutOwner) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	obj := o.object()
	gvk, err := hub.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	objects := &metav1.PartialObjectMetadataList{}
	objects.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingFields{"metadata.name": obj.GetName()}}
	if obj.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	ow, err := hub.Watch(ctx, objects, opts...)
	if err != nil {
		return fmt.Errorf("watch %s: %w", o.what(), err)
	}
	defer ow.Stop()
	list, _, err := objectEvents(ctx, hub, obj)
	if err != nil {
		return err
	}
	ew, err := hub.Watch(ctx, &corev1.EventList{}, client.InNamespace(eventsNamespace(obj)),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return fmt.Errorf("watch the Events of %s: %w", o.what(), err)
	}
	defer ew.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-ow.ResultChan():
			if !ok {
				return nil
			}
			if m, isMeta := ev.Object.(metav1.Object); isMeta && m.GetResourceVersion() != obj.GetResourceVersion() {
				return nil
			}
		case ev, ok := <-ew.ResultChan():
			if !ok {
				return nil
			}
			if e, isEvent := ev.Object.(*corev1.Event); isEvent && e.InvolvedObject.UID == obj.GetUID() {
				return nil
			}
		}
	}
}
