package kro

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The core-kinds corpus: kro's own examples and test fixtures that need only built-in
// Kubernetes kinds (fleet-apis.md, section 2.2), read from the pinned kro module.
var (
	// corpusNamespaced create namespaced children only.
	corpusNamespaced = []string{
		"examples/kubernetes/additionalPrinterColumns/rg.yaml",
		"examples/kubernetes/cel-functions/rg.yaml",
		"examples/kubernetes/defaults/rg.yaml",
		"examples/kubernetes/dogsvscats/result-app/rg.yaml",
		"examples/kubernetes/dogsvscats/vote-app/rg.yaml",
		"examples/kubernetes/dogsvscats/worker-app/rg.yaml",
		"examples/kubernetes/job-example/rgd.yaml",
		"examples/kubernetes/saas-multi-tenant/tenant-application-rgd.yaml",
		"examples/kubernetes/webapp/rg.yaml",
		"examples/apigateway/vpc-lattice/rg-webapp.yaml",
	}
	// corpusClusterScoped create cluster-scoped children or children in other namespaces.
	corpusClusterScoped = []string{
		"examples/kubernetes/core-dns/core-dns.yaml",
		"examples/kubernetes/saas-multi-tenant/tenant-environment-rgd.yaml",
		"examples/aws/ack-controller/crds/ec2-crd-group.yaml",
		"examples/aws/ack-controller/crds/ecr-crd-group.yaml",
		"examples/aws/ack-controller/crds/ecr-public-crd-group.yaml",
		"examples/aws/ack-controller/crds/eks-crd-group.yaml",
		"examples/aws/ack-controller/crds/iam-crd-group.yaml",
		"examples/aws/ack-controller/crds/s3-crd-group.yaml",
		"examples/aws/ack-controller/crds/sqs-crd-group.yaml",
	}
	// corpusRejected are corpus files kro v0.9.4 itself rejects against Kubernetes' schemas:
	// llm.yaml puts a boolean where a nodeSelector value must be a string.
	corpusRejected = []string{
		"examples/aws/llm/llm.yaml",
	}
	// corpusChained use the kinds of other corpus RGDs (tenant-environment, tenant-application).
	corpusChained = []string{
		"examples/kubernetes/saas-multi-tenant/tenant-rgd.yaml",
	}
	corpusChainsaw = []string{
		"cel-random-namespaced-function", "check-arbitary-objects", "check-external-references",
		"check-instance-creation", "check-instance-update", "check-multi-resource-rgd",
		"check-required-default-interactions", "check-rgd-creation", "check-rgd-deletion",
		"check-validation-markers",
	}
	corpusUpgrade = []string{
		"conditional", "deletion-target", "external-ref", "foreach-empty", "foreach-nil", "group-default",
		"group-explicit", "includewhen-empty", "includewhen-nil", "legacy-selector", "metadata-empty",
		"metadata-nil", "mixed-nil-empty", "multi-dependency", "readywhen-empty", "readywhen-nil",
		"resources-reverse-order", "simple-deployment", "validation-markers",
	}
)

// corpus lists the self-contained corpus files (not the chained ones), relative to the module.
func corpus() []string {
	files := append(append([]string{}, corpusNamespaced...), corpusClusterScoped...)
	for _, dir := range corpusChainsaw {
		files = append(files, "test/e2e/chainsaw/"+dir+"/rgd.yaml")
	}
	for _, dir := range corpusUpgrade {
		files = append(files, "test/upgrade/fixtures/"+dir+"/rgd.yaml")
	}
	return files
}

var (
	moduleDirOnce sync.Once
	moduleDir     string
	moduleDirErr  error
)

// kroDir is the pinned kro module's directory in the module cache.
func kroDir(t testing.TB) string {
	t.Helper()
	moduleDirOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", ModulePath).Output()
		if err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				err = errors.New(string(exit.Stderr))
			}
			moduleDirErr = err
			return
		}
		moduleDir = strings.TrimSpace(string(out))
	})
	if moduleDirErr != nil || moduleDir == "" {
		t.Fatalf("locate %s in the module cache (go mod download): %v", ModulePath, moduleDirErr)
	}
	return moduleDir
}

// readDocs reads the YAML documents of a file.
func readDocs(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// readRGD reads the ResourceGraphDefinition of a corpus file, with a uid as the hub would give.
func readRGD(t testing.TB, path string) *ResourceGraphDefinition {
	t.Helper()
	for _, doc := range readDocs(t, path) {
		if doc.GetKind() != "ResourceGraphDefinition" {
			continue
		}
		data, err := doc.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		rgd := &ResourceGraphDefinition{}
		if err := yaml.UnmarshalStrict(data, rgd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rgd.UID = types.UID("uid-" + rgd.Name)
		return rgd
	}
	t.Fatalf("%s holds no ResourceGraphDefinition", path)
	return nil
}

func corpusRGD(t testing.TB, rel string) *ResourceGraphDefinition {
	t.Helper()
	return readRGD(t, filepath.Join(kroDir(t), rel))
}

// readDocsIfAny reads a file's documents, or none when it does not exist.
func readDocsIfAny(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return readDocs(t, path)
}
