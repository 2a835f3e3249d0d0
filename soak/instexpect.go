package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// instanceDiff compares the children Flotilla expanded on one spoke with its SoakApp
// instances: each live instance has its ConfigMap (data.image) and Deployment (image,
// replicas), owned by that instance (Flotilla's owner label for it), and Flotilla owns no
// other object in the instances' namespace.
func instanceDiff(cluster string, s spokeState) []difference {
	var out []difference
	cms := map[string]corev1.ConfigMap{}
	for _, cm := range s.AppConfigMaps {
		cms[cm.Name] = cm
	}
	deps := map[string]appsv1.Deployment{}
	for _, d := range s.AppDeployments {
		deps[d.Name] = d
	}
	wanted := map[string]bool{}
	for _, inst := range s.Instances {
		if inst.GetDeletionTimestamp() != nil {
			continue
		}
		name := inst.GetName()
		image, _, _ := unstructured.NestedString(inst.Object, "spec", "image")
		replicas, _, _ := unstructured.NestedInt64(inst.Object, "spec", "replicas")
		owner := render.Owner{Kind: instanceKind, Namespace: appsNS, Name: name, Cluster: cluster}.LabelValue()
		cmName, key := name+"-config", childKeys(cluster, name)
		wanted["cm/"+cmName], wanted["dep/"+name] = true, true
		if cm, ok := cms[cmName]; !ok {
			out = append(out, difference{cluster, key[0], "object", "present (child of SoakApp " + name + ")", "missing"})
		} else {
			if cm.Data["image"] != image {
				out = append(out, difference{cluster, key[0], "data.image", image, cm.Data["image"]})
			}
			if got := cm.Labels[flotillav1.LabelOwner]; got != owner {
				out = append(out, difference{cluster, key[0], "metadata.labels." + flotillav1.LabelOwner, owner, got})
			}
		}
		d, ok := deps[name]
		if !ok {
			out = append(out, difference{cluster, key[1], "object", "present (child of SoakApp " + name + ")", "missing"})
			continue
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != image {
			out = append(out, difference{cluster, key[1], "spec.template.spec.containers[0].image", image, img})
		}
		if d.Spec.Replicas == nil || int64(*d.Spec.Replicas) != replicas {
			got := "unset"
			if d.Spec.Replicas != nil {
				got = fmt.Sprint(*d.Spec.Replicas)
			}
			out = append(out, difference{cluster, key[1], "spec.replicas", fmt.Sprint(replicas), got})
		}
		if got := d.Labels[flotillav1.LabelOwner]; got != owner {
			out = append(out, difference{cluster, key[1], "metadata.labels." + flotillav1.LabelOwner, owner, got})
		}
	}
	for _, name := range sortedKeys(cms) {
		if !wanted["cm/"+name] {
			out = append(out, difference{cluster, objKey("configmaps/" + appsNS + "/" + name), "object", "absent (no SoakApp wants it)", "present"})
		}
	}
	for _, name := range sortedKeys(deps) {
		if !wanted["dep/"+name] {
			out = append(out, difference{cluster, objKey("deployments/" + appsNS + "/" + name), "object", "absent (no SoakApp wants it)", "present"})
		}
	}
	return out
}
