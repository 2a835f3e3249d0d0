package install

import (
	"bytes"
	"os"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// config/ installs the same policy as `flotilla install`, for the controller's ServiceAccount.
func TestDeliveryPolicyManifest(t *testing.T) {
	data, err := os.ReadFile("../../config/crd/policy/deliveries.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(data, []byte("\n---\n"))
	if len(docs) != 2 {
		t.Fatalf("config/crd/policy/deliveries.yaml has %d documents, want the policy and its binding", len(docs))
	}
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict(docs[0], &policy); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &binding); err != nil {
		t.Fatal(err)
	}
	wantPolicy, wantBinding, err := DeliveryPolicy(DefaultController)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(&policy, wantPolicy) || !equality.Semantic.DeepEqual(&binding, wantBinding) {
		t.Errorf("config/crd/policy/deliveries.yaml differs from DeliveryPolicy(%q): regenerate it", DefaultController)
	}
	kustomization, err := os.ReadFile("../../config/crd/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy/deliveries.yaml", "bases/flotilla.dev_deliveries.yaml"} {
		if !strings.Contains(string(kustomization), want) {
			t.Errorf("config/crd/kustomization.yaml does not install %s", want)
		}
	}
	if _, _, err := DeliveryPolicy(" "); err == nil {
		t.Errorf("a policy for an empty user name was made")
	}
	if _, _, err := DeliveryPolicy(); err == nil {
		t.Errorf("a policy for no user was made: no one could write records")
	}
}
