package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// The soak's fleet API: an RGD on the hub served on every spoke by an APIPropagation. Its
// instances (SoakApp, in appsNS) are created, changed and deleted on the spokes by the edit
// stream, as a spoke's users would; Flotilla expands each into a ConfigMap and a Deployment
// in its spoke.
const (
	appsNS        = "soak-apps"
	apisPlacement = "soak-apis"
	instanceKind  = "SoakApp.kro.run" // the owner kind Flotilla names an instance by
	maxInstances  = 3
	// instanceChildren is how many objects an instance has: a change of one is as many units of work.
	instanceChildren = 2
	// servedTimeout bounds the wait for the SoakApp CRD on every spoke at the start.
	servedTimeout = 3 * time.Minute
)

var soakAppGVR = schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "soakapps"}

// soakRGD is the fleet API: an instance's image and replicas become a ConfigMap's data and a
// Deployment's image and replicas.
const soakRGD = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: soakapps.kro.run
spec:
  schema:
    apiVersion: v1alpha1
    kind: SoakApp
    spec:
      image: string | default=registry.example/soak/app:v0
      replicas: integer | default=1
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-config
        namespace: ${schema.metadata.namespace}
      data:
        image: ${schema.spec.image}
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.metadata.name}
        namespace: ${schema.metadata.namespace}
      spec:
        replicas: ${schema.spec.replicas}
        selector:
          matchLabels:
            soak-app: ${schema.metadata.name}
        template:
          metadata:
            labels:
              soak-app: ${schema.metadata.name}
          spec:
            containers:
            - name: app
              image: ${schema.spec.image}
`

// setUpAPIs creates the RGD, its Placement and APIPropagation on the hub and the instances'
// namespace on every spoke, and waits until every spoke serves the SoakApp CRD.
func setUpAPIs(ctx context.Context, hub client.Client, spokes []*localfleet.Plane, clients []kubernetes.Interface) error {
	rgd := &kro.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(soakRGD), rgd); err != nil {
		return err
	}
	for _, obj := range []client.Object{
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: apisPlacement, Namespace: membership.Namespace},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		rgd,
		&flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "soak"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{rgd.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: apisPlacement, Namespace: membership.Namespace}}},
	} {
		if err := hub.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	for i, cs := range clients {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appsNS}}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: create namespace %s: %w", spokes[i].Name(), appsNS, err)
		}
	}
	crdName := kro.CRDName(rgd)
	for _, s := range spokes {
		c, err := client.New(soakConfig(s), client.Options{Scheme: install.Scheme()})
		if err != nil {
			return err
		}
		deadline := time.Now().Add(servedTimeout)
		for {
			crd := &extv1.CustomResourceDefinition{}
			err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd)
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s does not serve %s after %s (last: %v); see the APIPropagation soak's status on the hub", s.Name(), crdName, servedTimeout, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	fmt.Printf("fleet API %s served on %d spokes\n", crdName, len(spokes))
	return nil
}

func established(crd *extv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
			return true
		}
	}
	return false
}

// instanceClients are the spokes' dynamic clients for SoakApp instances.
func instanceClients(spokes []*localfleet.Plane) ([]dynamic.NamespaceableResourceInterface, error) {
	var out []dynamic.NamespaceableResourceInterface
	for _, s := range spokes {
		d, err := dynamic.NewForConfig(soakConfig(s))
		if err != nil {
			return nil, err
		}
		out = append(out, d.Resource(soakAppGVR))
	}
	return out, nil
}

// childKeys are the objects an instance on cluster wants there, keyed with the cluster: unlike
// the hub's objects, what an instance wants differs by cluster.
func childKeys(cluster, instance string) []objKey {
	return []objKey{
		objKey("configmaps/" + appsNS + "/" + instance + "-config@" + cluster),
		objKey("deployments/" + appsNS + "/" + instance + "@" + cluster),
	}
}
