package render

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// withoutMarkers removes what Render adds, leaving what it kept of the hub object.
func withoutMarkers(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	labels := c.GetLabels()
	delete(labels, flotillav1.LabelManagedBy)
	delete(labels, flotillav1.LabelOwner)
	c.SetLabels(labels)
	annotations := c.GetAnnotations()
	delete(annotations, flotillav1.AnnotationOwner)
	delete(annotations, flotillav1.AnnotationHash)
	c.SetAnnotations(annotations)
	for _, f := range []string{"labels", "annotations"} {
		v, _, _ := unstructured.NestedFieldNoCopy(c.Object, "metadata", f)
		if m, _ := v.(map[string]any); len(m) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", f)
		}
	}
	return c.Object
}

func TestRenderDropsWhatTheHubAllocated(t *testing.T) {
	tests := []struct {
		name      string
		hub, want string
	}{
		{
			name: "ClusterIP Service loses its addresses and keeps its families",
			hub: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a, uid: u-1}
spec:
  type: ClusterIP
  clusterIP: 10.96.12.34
  clusterIPs: [10.96.12.34]
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
  selector: {app: web}`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a}
spec:
  type: ClusterIP
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
  selector: {app: web}`,
		},
		{
			name: "headless Service stays headless",
			hub: `
apiVersion: v1
kind: Service
metadata: {name: db, namespace: a, uid: u-1}
spec:
  clusterIP: None
  clusterIPs: [None]
  ports: [{port: 5432}]`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: db, namespace: a}
spec:
  clusterIP: None
  clusterIPs: [None]
  ports: [{port: 5432}]`,
		},
		{
			name: "NodePort Service loses its node ports",
			hub: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a, uid: u-1}
spec:
  type: NodePort
  clusterIP: 10.96.0.20
  clusterIPs: [10.96.0.20]
  externalTrafficPolicy: Cluster
  ports:
  - {name: http, port: 80, nodePort: 30080}
  - {name: https, port: 443, nodePort: 30443}`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a}
spec:
  type: NodePort
  externalTrafficPolicy: Cluster
  ports:
  - {name: http, port: 80}
  - {name: https, port: 443}`,
		},
		{
			name: "LoadBalancer Service loses node ports and the health check port",
			hub: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a, uid: u-1}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.21
  clusterIPs: [10.96.0.21]
  externalTrafficPolicy: Local
  healthCheckNodePort: 31234
  allocateLoadBalancerNodePorts: true
  ports: [{port: 80, nodePort: 30081}]
status: {loadBalancer: {ingress: [{ip: 192.0.2.1}]}}`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  allocateLoadBalancerNodePorts: true
  ports: [{port: 80}]`,
		},
		{
			name: "Job loses its generated selector and UID labels, keeps job-name",
			hub: `
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: a
  uid: 0d5a-hub
  labels: {app: pi, controller-uid: 0d5a-hub, batch.kubernetes.io/controller-uid: 0d5a-hub, job-name: pi, batch.kubernetes.io/job-name: pi}
spec:
  manualSelector: false
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: 0d5a-hub}}
  template:
    metadata:
      labels: {app: pi, controller-uid: 0d5a-hub, batch.kubernetes.io/controller-uid: 0d5a-hub, job-name: pi, batch.kubernetes.io/job-name: pi}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}`,
			want: `
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: a
  labels: {app: pi, job-name: pi, batch.kubernetes.io/job-name: pi}
spec:
  manualSelector: false
  template:
    metadata:
      labels: {app: pi, job-name: pi, batch.kubernetes.io/job-name: pi}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}`,
		},
		{
			name: "Job without manualSelector is treated as generated; emptied labels go",
			hub: `
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: a
  uid: 0d5a-hub
  labels: {controller-uid: 0d5a-hub}
spec:
  selector: {matchLabels: {controller-uid: 0d5a-hub}}
  template:
    metadata:
      labels: {controller-uid: 0d5a-hub, job-name: pi}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}`,
			want: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: a}
spec:
  template:
    metadata:
      labels: {job-name: pi}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}`,
		},
		{
			name: "Job with manualSelector keeps its selector and labels",
			hub: `
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: a
  uid: 0d5a-hub
  labels: {app: pi}
spec:
  manualSelector: true
  selector: {matchLabels: {app: pi, controller-uid: mine}}
  template:
    metadata:
      labels: {app: pi, controller-uid: mine}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}`,
			want: `
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: a
  labels: {app: pi}
spec:
  manualSelector: true
  selector: {matchLabels: {app: pi, controller-uid: mine}}
  template:
    metadata:
      labels: {app: pi, controller-uid: mine}
    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}`,
		},
		{
			name: "DaemonSet loses the hub's template generation",
			hub: `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: a
  uid: u-1
  annotations: {deprecated.daemonset.template.generation: "4", team: a}
spec: {selector: {matchLabels: {app: agent}}}`,
			want: `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: a
  annotations: {team: a}
spec: {selector: {matchLabels: {app: agent}}}`,
		},
		{
			name: "a manifest document was never stored on the hub and keeps what its user wrote",
			hub: `
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system}
spec:
  clusterIP: 10.96.0.10
  ports: [{port: 53, nodePort: 30053}]`,
			want: `
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system}
spec:
  clusterIP: 10.96.0.10
  ports: [{port: 53, nodePort: 30053}]`,
		},
		{
			name: "rules are per kind: another kind's clusterIP is kept",
			hub: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: a, uid: u-1}
spec: {clusterIP: 10.0.0.1, selector: {matchLabels: {controller-uid: x}}}`,
			want: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: a}
spec: {clusterIP: 10.0.0.1, selector: {matchLabels: {controller-uid: x}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hub := fromYAML(t, tt.hub)
			before := hub.DeepCopy()
			out, err := Render(hub, owner)
			if err != nil {
				t.Fatal(err)
			}
			got, want := withoutMarkers(out), fromYAML(t, tt.want).Object
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("rendered\n%s\nwant\n%s", g, w)
			}
			if !reflect.DeepEqual(hub, before) {
				t.Error("Render modified its input")
			}
		})
	}
}

func TestHashIgnoresWhatTheHubAllocated(t *testing.T) {
	pairs := []struct {
		name string
		a, b string
	}{
		{
			name: "Service addresses and ports",
			a: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a, uid: u-1}
spec: {type: LoadBalancer, clusterIP: 10.96.0.1, clusterIPs: [10.96.0.1], healthCheckNodePort: 31000, ports: [{port: 80, nodePort: 30001}]}`,
			b: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a, uid: u-2}
spec: {type: LoadBalancer, clusterIP: 10.97.3.4, clusterIPs: [10.97.3.4], healthCheckNodePort: 32000, ports: [{port: 80, nodePort: 30002}]}`,
		},
		{
			name: "Job selector and UID labels",
			a: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: a, uid: u-1, labels: {app: pi, controller-uid: u-1}}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u-1}}
  template: {metadata: {labels: {app: pi, job-name: pi, controller-uid: u-1, batch.kubernetes.io/controller-uid: u-1}}}`,
			b: `
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: a, uid: u-2, labels: {app: pi, controller-uid: u-2}}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u-2}}
  template: {metadata: {labels: {app: pi, job-name: pi, controller-uid: u-2, batch.kubernetes.io/controller-uid: u-2}}}`,
		},
	}
	hash := func(doc string) string {
		out, err := Render(fromYAML(t, doc), owner)
		if err != nil {
			t.Fatal(err)
		}
		return out.GetAnnotations()[flotillav1.AnnotationHash]
	}
	for _, p := range pairs {
		if hash(p.a) != hash(p.b) {
			t.Errorf("%s: hash changed", p.name)
		}
	}
	headless := `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a, uid: u-1}
spec: {clusterIP: None, clusterIPs: [None]}`
	if hash(headless) == hash(pairs[0].a) {
		t.Error("a headless Service and a ClusterIP Service hash the same")
	}
}
