package fleetapis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// applyRGDs applies the cases' RGDs on the hub, as kro's files have them.
func applyRGDs(t *testing.T, hubKC string, cases []*loadedCase) {
	t.Helper()
	args := []string{"apply"}
	for _, c := range cases {
		args = append(args, "-f", c.rgdPath)
	}
	mustKubectl(t, hubKC, args...)
}

// The corpus' two APIPropagations: corpus serves its RGDs under the default tenancy
// (Namespace), corpus-cluster under tenancy Cluster.
const (
	corpusFAPI        = "corpus"
	corpusClusterFAPI = "corpus-cluster"
)

// applyAPIPropagations applies the Placement of every spoke and the two APIPropagations, each
// choosing by name the RGDs served maps to it. Removal Delete: the second wave's RGDs reuse
// names of the first, whose CRDs must go for them.
func applyAPIPropagations(t *testing.T, hubKC string, served map[string]string) {
	t.Helper()
	docs := []string{`apiVersion: flotilla.dev/v1alpha1
kind: Placement
metadata:
  name: all-clusters
  namespace: flotilla-system
spec:
  clusterSelector: {}
`}
	for _, fapi := range []string{corpusFAPI, corpusClusterFAPI} {
		var names []string
		for name, by := range served {
			if by == fapi {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		list, _ := json.Marshal(names)
		tenancy := "Namespace"
		if fapi == corpusClusterFAPI {
			tenancy = "Cluster"
		}
		docs = append(docs, `apiVersion: flotilla.dev/v1alpha1
kind: APIPropagation
metadata:
  name: `+fapi+`
spec:
  resourceGraphDefinitions:
    names: `+string(list)+`
  placementRef: {name: all-clusters, namespace: flotilla-system}
  removal: Delete
  tenancy: `+tenancy+`
`)
	}
	file := filepath.Join(t.TempDir(), "fapi.yaml")
	writeFile(t, file, strings.Join(docs, "---\n"))
	mustKubectl(t, hubKC, "apply", "-f", file)
}

// waitServing waits for every RGD of served to be served, at its newest generation, on every
// spoke, by its APIPropagation.
func waitServing(t *testing.T, hubKC string, served map[string]string) {
	t.Helper()
	for _, fapi := range []string{corpusFAPI, corpusClusterFAPI} {
		apis := 0
		for _, by := range served {
			if by == fapi {
				apis++
			}
		}
		fleettest.Eventually(t, 2*time.Minute, "the corpus served on every spoke by "+fapi, func() error {
			status, err := corpusStatus(t, hubKC, fapi)
			if err != nil {
				return err
			}
			if status.APICount != int32(apis) {
				return fmt.Errorf("apiCount %d, want %d", status.APICount, apis)
			}
			for _, c := range status.Conditions {
				if c.Type == "Serving" && c.Status == "True" {
					return nil
				}
				if c.Type == "Serving" {
					return fmt.Errorf("Serving %s %s: %s", c.Status, c.Reason, c.Message)
				}
			}
			return errors.New("no Serving condition")
		})
	}
}

type instanceCounts struct {
	Total      int32 `json:"total"`
	Active     int32 `json:"active"`
	InProgress int32 `json:"inProgress"`
	Error      int32 `json:"error"`
	Deleting   int32 `json:"deleting"`
}

type apiStatus struct {
	Name      string          `json:"name"`
	Instances *instanceCounts `json:"instances"`
	NotReady  []notReady      `json:"notReady"`
}

type notReady struct {
	Cluster, Instance, State, Reason, Message string
}

type fapiStatus struct {
	APICount   int32 `json:"apiCount"`
	Conditions []struct {
		Type, Status, Reason, Message string
	} `json:"conditions"`
	Instances *instanceCounts `json:"instances"`
	APIs      []apiStatus     `json:"apis"`
}

func corpusStatus(t *testing.T, hubKC, fapi string) (*fapiStatus, error) {
	out, err := kubectlStdout(t, hubKC, "get", "apipropagation", fapi, "-o", "jsonpath={.status}")
	if err != nil {
		return nil, err
	}
	status := &fapiStatus{}
	if err := json.Unmarshal([]byte(out), status); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	return status, nil
}

// kubectlList runs a kubectl get with -o json and returns the items.
func kubectlList(t *testing.T, kubeconfig string, args ...string) ([]*unstructured.Unstructured, error) {
	out, err := kubectlStdout(t, kubeconfig, append(args, "-o", "json")...)
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON([]byte(out)); err != nil {
		return nil, fmt.Errorf("%v: %.200s", err, out)
	}
	var items []*unstructured.Unstructured
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	return items, nil
}

// kubectlStdout is kubectl with its standard output alone (warnings go to standard error).
func kubectlStdout(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, fleettest.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// kroModuleDir is the pinned kro module's directory in the module cache.
func kroModuleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/kubernetes-sigs/kro").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("locate the kro module (go mod download): %v", err)
	}
	return dir
}

// readYAMLFile reads the objects of a YAML file of one or more documents.
func readYAMLFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func yamlStream(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var docs []string
	for _, u := range objs {
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	return strings.Join(docs, "---\n")
}
