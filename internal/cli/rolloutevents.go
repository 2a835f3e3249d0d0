package cli

import (
	"context"
	"fmt"
	"strconv"
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
// the latest of its Rollout<Phase> Events, "revision REV: MESSAGE", of latest (the owner's
// newest kept revision). Events are advisory: anyone who may create Events in the namespace can
// write one, so they are ordered by what the API server sets (creationTimestamp, then
// resourceVersion), never by their own timestamps, and one of any other revision is ignored.
// No revision is ever taken from an Event: approve and undo take latest.
func rolloutFromEvents(ctx context.Context, hub client.Reader, obj client.Object, latest string) (rolloutReport, error) {
	list, events, err := objectEvents(ctx, hub, obj)
	if err != nil {
		return rolloutReport{}, err
	}
	ns := eventsNamespace(obj)
	rep := rolloutReport{advisory: true, eventsVersion: list.ResourceVersion}
	var latestEv *corev1.Event
	var phase flotillav1.RolloutPhase
	var rev, msg string
	ignored := 0
	for i := range events {
		ev := &events[i]
		p, ok := eventPhase(ev.Reason)
		if !ok {
			continue
		}
		r, m, _ := strings.Cut(strings.TrimPrefix(ev.Message, "revision "), ": ")
		if latest == "" || r != latest {
			ignored++
			continue
		}
		if latestEv == nil || !eventCreatedBefore(ev, latestEv) {
			latestEv, phase, rev, msg = ev, p, r, m
		}
	}
	if latestEv == nil {
		switch {
		case latest == "":
			rep.source = "its Events (it keeps no revision, so none is taken as its rollout's)"
		case ignored > 0:
			rep.source = fmt.Sprintf("its Events (%d Rollout* Events ignored: none is of revision %s, its newest kept)", ignored, latest)
		default:
			rep.source = "its Events (none says Rollout*: nothing has rolled out since they expired)"
		}
		return rep, nil
	}
	rep.rollout = &flotillav1.RolloutStatus{Revision: rev, Phase: phase, Message: msg}
	rep.source = fmt.Sprintf("its latest %s Event of revision %s, created at %s; advisory: Events can be written by anyone who may create Events in namespace %s",
		latestEv.Reason, latest, latestEv.CreationTimestamp.UTC().Format(time.RFC3339), ns)
	if ignored > 0 {
		rep.source += fmt.Sprintf("; %d Rollout* Events of other revisions ignored", ignored)
	}
	return rep, nil
}

// eventCreatedBefore orders Events by what the API server sets, never by the timestamps whoever
// wrote them chose: creationTimestamp, then resourceVersion.
func eventCreatedBefore(a, b *corev1.Event) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	ra, errA := strconv.ParseUint(a.ResourceVersion, 10, 64)
	rb, errB := strconv.ParseUint(b.ResourceVersion, 10, 64)
	if errA == nil && errB == nil {
		return ra < rb
	}
	if len(a.ResourceVersion) != len(b.ResourceVersion) {
		return len(a.ResourceVersion) < len(b.ResourceVersion)
	}
	return a.ResourceVersion < b.ResourceVersion
}

func eventPhase(reason string) (flotillav1.RolloutPhase, bool) {
	for _, p := range rolloutPhases {
		if reason == "Rollout"+string(p) {
			return p, true
		}
	}
	return "", false
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
// minute, to look again): Events since eventsVersion, the Event list the status was read from
// ("" for now).
func waitForChange(ctx context.Context, hub client.WithWatch, o rolloutOwner, eventsVersion string) error {
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
	if eventsVersion == "" {
		list, _, err := objectEvents(ctx, hub, obj)
		if err != nil {
			return err
		}
		eventsVersion = list.ResourceVersion
	}
	ew, err := hub.Watch(ctx, &corev1.EventList{}, client.InNamespace(eventsNamespace(obj)),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: eventsVersion}})
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
