package kro

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	clientopenapi "k8s.io/client-go/openapi"
	"k8s.io/client-go/restmapper"
)

// The spoke snapshot is what a local-fleet spoke serves for the built-in groups kro's core-kinds
// corpus uses: its /openapi/v3 documents (gzipped, descriptions removed) and its discovery
// groups. TestCompileAgainstALiveSpoke records it when FLOTILLA_KRO_RECORD=1 and otherwise
// checks that compiling from it gives exactly what compiling against the live spoke gives.
const snapshotDir = "testdata/spoke"

// snapshotGroupVersions are the recorded group-versions, as /openapi/v3 paths.
var snapshotGroupVersions = []string{
	"api/v1",
	"apis/apps/v1",
	"apis/batch/v1",
	"apis/autoscaling/v2",
	"apis/networking.k8s.io/v1",
	"apis/rbac.authorization.k8s.io/v1",
	"apis/storage.k8s.io/v1",
	"apis/apiextensions.k8s.io/v1",
}

var (
	snapshotOnce   sync.Once
	snapshotTarget Target
	snapshotErr    error
)

// spokeSnapshot is the Target of the recorded spoke.
func spokeSnapshot(t testing.TB) Target {
	t.Helper()
	snapshotOnce.Do(func() { snapshotTarget, snapshotErr = loadSnapshot(snapshotDir) })
	if snapshotErr != nil {
		t.Fatalf("load the spoke snapshot (record it with FLOTILLA_KRO_RECORD=1 and the integration test): %v", snapshotErr)
	}
	return snapshotTarget
}

func loadSnapshot(dir string) (Target, error) {
	docs := gzipDocs{}
	for _, gv := range snapshotGroupVersions {
		data, err := readGzip(filepath.Join(dir, "openapi", docFile(gv)))
		if err != nil {
			return Target{}, err
		}
		docs[gv] = data
	}
	raw, err := os.ReadFile(filepath.Join(dir, "discovery.json"))
	if err != nil {
		return Target{}, err
	}
	var groups []*restmapper.APIGroupResources
	if err := json.Unmarshal(raw, &groups); err != nil {
		return Target{}, err
	}
	return TargetForSnapshot(docs, groups), nil
}

// recordSnapshot writes the snapshot from a live cluster.
func recordSnapshot(dc discovery.DiscoveryInterface, dir string) error {
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "openapi"), 0o755); err != nil {
		return err
	}
	for _, gv := range snapshotGroupVersions {
		doc, ok := paths[gv]
		if !ok {
			return errors.New("the cluster does not serve " + gv)
		}
		data, err := doc.Schema("application/json")
		if err != nil {
			return err
		}
		if data, err = withoutDescriptions(data); err != nil {
			return err
		}
		if err := writeGzip(filepath.Join(dir, "openapi", docFile(gv)), data); err != nil {
			return err
		}
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return err
	}
	var kept []*restmapper.APIGroupResources
	for _, g := range groups {
		for version := range g.VersionedResources {
			if !slices.Contains(snapshotGroupVersions, openAPIPath(schema.GroupVersion{Group: g.Group.Name, Version: version})) {
				delete(g.VersionedResources, version)
			}
		}
		if len(g.VersionedResources) > 0 {
			kept = append(kept, g)
		}
	}
	data, err := json.MarshalIndent(kept, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "discovery.json"), data, 0o644)
}

// withoutDescriptions drops documentation strings, which are most of a document's size and play
// no part in compiling. A property named "description" is an object, and stays.
func withoutDescriptions(data []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["description"].(string); ok {
				delete(v, "description")
			}
			for _, child := range v {
				strip(child)
			}
		case []any:
			for _, child := range v {
				strip(child)
			}
		}
	}
	strip(doc)
	return json.Marshal(doc)
}

func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

func docFile(gv string) string { return strings.ReplaceAll(gv, "/", "__") + ".json.gz" }

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func writeGzip(path string, data []byte) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// gzipDocs serves recorded OpenAPI v3 documents by path.
type gzipDocs map[string][]byte

func (d gzipDocs) Paths() (map[string]clientopenapi.GroupVersion, error) {
	out := make(map[string]clientopenapi.GroupVersion, len(d))
	for path, data := range d {
		out[path] = recordedDoc{path: path, data: data}
	}
	return out, nil
}

type recordedDoc struct {
	path string
	data []byte
}

func (r recordedDoc) Schema(contentType string) ([]byte, error) {
	if contentType != "application/json" {
		return nil, errors.New("recorded documents are JSON only")
	}
	return r.data, nil
}

func (r recordedDoc) ServerRelativeURL() string { return "/openapi/v3/" + r.path }
