package ownerkinds

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ReasonDriftCorrected is the reason of the Event of a corrected drift. A drift left is
// flotillav1.ReasonDrifted, a fight flotillav1.ReasonFighting: the reasons of a Propagation's
// conditions about them too.
const ReasonDriftCorrected = "DriftCorrected"

// EventTimeout bounds the hub read a drift Event needs (the object it goes on).
const EventTimeout = 10 * time.Second

// maxEventMessage bounds a drift Event's message, in characters (a drift names fields and who
// changed them; a long list must not make an Event the API server refuses).
const maxEventMessage = 1024

// fightPolicy says what Flotilla does about a fight, for its Event.
var fightPolicy = fmt.Sprintf("Flotilla corrects it only when its backoff ends (at most every %s) or at once when it changes on the hub", drift.MaxBackoff)

// DriftEvents makes each drift a delivery finds an Event on the hub object that stands for its
// owner, the same way for every owner kind.
//
// Give it the core/v1 recorder (manager.GetEventRecorderFor), on purpose: its replacement
// (events.k8s.io) folds Events that differ only in their message into one series, which would
// hide every drift after the first (which cluster, which field, who changed it).
type DriftEvents struct {
	Recorder record.EventRecorder
	// Object reads the hub object the Events about owner go on; an error drops the Event (the
	// object is gone, or the hub cache did not answer within EventTimeout).
	Object func(ctx context.Context, owner render.Owner) (client.Object, error)
	// LeftBecause says what leaves a drift as it is, for the Event of one left ("strategy.drift
	// or mode"); empty says nothing more.
	LeftBecause string
}

// Record emits the Event of a drift on cluster: Normal DriftCorrected when Flotilla corrected
// it, Warning Drifted when it is left (drift Report, mode ApplyOnce), and Warning Fighting when a
// fight starts (one Event per fight, not per correction). Deliver workers call it, and it
// returns at once: the Event needs the hub object read from the hub cache, which may be slow or
// not synced, so the read and the Event happen aside, within EventTimeout. DriftEvents without
// a Recorder or an Object (a controller not set up) record nothing.
func (e DriftEvents) Record(owner render.Owner, cluster string, d deliver.Drift) {
	if e.Recorder == nil || e.Object == nil {
		return
	}
	go e.record(owner, cluster, d)
}

func (e DriftEvents) record(owner render.Owner, cluster string, d deliver.Drift) {
	ctx, cancel := context.WithTimeout(context.Background(), EventTimeout)
	defer cancel()
	obj, err := e.Object(ctx, owner)
	if err != nil || obj == nil {
		return
	}
	eventType, reason, message := driftEvent(cluster, d, e.LeftBecause)
	e.Recorder.Event(obj, eventType, reason, message)
}

// driftEvent is the Event of a drift on cluster.
func driftEvent(cluster string, d deliver.Drift, leftBecause string) (eventType, reason, message string) {
	msg := "cluster " + cluster + ": " + d.Describe()
	switch {
	case d.Fighting:
		eventType, reason, msg = corev1.EventTypeWarning, flotillav1.ReasonFighting, msg+"; "+fightPolicy
	case d.Corrected:
		eventType, reason, msg = corev1.EventTypeNormal, ReasonDriftCorrected, msg+"; corrected"
	default:
		eventType, reason, msg = corev1.EventTypeWarning, flotillav1.ReasonDrifted, msg+"; left as is"
		if leftBecause != "" {
			msg += " (" + leftBecause + ")"
		}
	}
	return eventType, reason, Limit(msg, maxEventMessage)
}

// ObjectOf reads the hub object whose namespace and name are the owner's, into what newObject
// makes for the owner: the Object of DriftEvents for owner kinds whose owners are hub objects of
// their own name.
func ObjectOf(hub client.Reader, newObject func(render.Owner) client.Object) func(context.Context, render.Owner) (client.Object, error) {
	return func(ctx context.Context, owner render.Owner) (client.Object, error) {
		obj := newObject(owner)
		return obj, hub.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: owner.Name}, obj)
	}
}

// Limit cuts s to at most n characters, marking the cut.
func Limit(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
