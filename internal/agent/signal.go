package agent

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Reasons of the Events the agent records on its spoke about reaching the hub.
const (
	ReasonHubUnreachable = "HubUnreachable"
	ReasonHubReachable   = "HubReachable"
)

// unreachableAfter is how many polls in a row must fail before the agent says on its spoke
// that the hub is unreachable: one lost request is not an outage.
const unreachableAfter = 3

// contact says on the spoke, with an Event once per transition, whether the hub answers: a
// Warning HubUnreachable once unreachableAfter polls in a row failed, a Normal HubReachable when
// it answers again, both with the last successful contact. The Events are about the agent's Pod
// when it runs in one (POD_NAME and POD_NAMESPACE, the downward API), else about its ConfigMap
// (memory.go): `kubectl get events -n NAMESPACE` and `kubectl describe` of either show them.
type contact struct {
	recorder  record.EventRecorder
	about     *corev1.ObjectReference
	hub       string // the work endpoint, for messages
	started   time.Time
	last      time.Time // the last successful answer; zero before the first
	failed    int       // polls failed in a row
	announced bool      // HubUnreachable recorded for this outage
}

// newContact records Events about the agent's Pod, or else about cm, through broadcaster.
func newContact(ctx context.Context, spoke kubernetes.Interface, broadcaster record.EventBroadcaster, cm *corev1.ConfigMap, hub string) *contact {
	about := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: cm.UID,
		ResourceVersion: cm.ResourceVersion}
	if name, ns := os.Getenv("POD_NAME"), os.Getenv("POD_NAMESPACE"); name != "" && ns != "" {
		if pod, err := spoke.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			about = &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name, UID: pod.UID}
		}
	}
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: spoke.CoreV1().Events("")})
	return &contact{recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: UserAgent}),
		about: about, hub: hub, started: time.Now()}
}

// failure takes a failed poll; it reports whether this one made the hub unreachable.
func (c *contact) failure(why string) bool {
	c.failed++
	if c.announced || c.failed < unreachableAfter {
		return false
	}
	c.announced = true
	c.recorder.Eventf(c.about, corev1.EventTypeWarning, ReasonHubUnreachable,
		"The hub's work endpoint %s does not answer (%d requests in a row failed, the last: %s); keeping the last work applied and drift-corrected and deleting nothing until it does. %s",
		c.hub, c.failed, why, c.lastContact())
	return true
}

// success takes a successful answer at now; it reports whether the hub was unreachable.
func (c *contact) success(now time.Time) bool {
	was := c.announced
	if was {
		c.recorder.Eventf(c.about, corev1.EventTypeNormal, ReasonHubReachable,
			"The hub's work endpoint %s answers again after %d failed requests; delivering its current work. %s",
			c.hub, c.failed, c.lastContact())
	}
	c.last, c.failed, c.announced = now, 0, false
	return was
}

func (c *contact) lastContact() string {
	if c.last.IsZero() {
		return fmt.Sprintf("No successful contact since the agent started at %s.", c.started.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("Last successful contact: %s (%s ago).", c.last.UTC().Format(time.RFC3339), time.Since(c.last).Round(time.Second))
}
