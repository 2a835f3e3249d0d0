package kro

import (
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes/scheme"
	clientopenapi "k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Target is one spoke's view of the API, which a graph is compiled against: the OpenAPI
// schemas the spoke serves (so a template's fields and CEL types are checked against the
// versions of the kinds that spoke has) and its REST mapper (which says whether each kind is
// namespaced there). Each spoke is compiled against its own Target, so a kind missing on one
// spoke fails the graph on that spoke only.
type Target struct {
	Schemas resolver.SchemaResolver
	Mapper  meta.RESTMapper
}

// TargetForConfig reads a cluster's discovery and /openapi/v3 through one in-memory cache, so a
// Target is a consistent view for the compiles it is used for: build a fresh one to see CRDs
// installed since. Nothing is read until the first compile.
func TargetForConfig(cfg *rest.Config) (Target, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Target{}, fmt.Errorf("discovery client: %w", err)
	}
	return TargetForDiscovery(memory.NewMemCacheClient(dc)), nil
}

// TargetForDiscovery builds a Target on a cached discovery client, exactly as kro builds its own
// from a live cluster (compiled-in apimachinery and apiextensions definitions first, then the
// cluster's /openapi/v3), minus kro's time-based cache: the caller owns the cache's lifetime.
func TargetForDiscovery(dc discovery.CachedDiscoveryInterface) Target {
	return Target{
		Schemas: builtinSchemas().Combine(&resolver.ClientDiscoveryResolver{Discovery: dc}),
		Mapper:  restmapper.NewDeferredDiscoveryRESTMapper(dc),
	}
}

// TargetForSnapshot builds a Target from recorded data and never dials a server: OpenAPI v3
// documents by group-version path (openapitest.NewFileClient reads a directory of them) and the
// discovery groups that a REST mapper is built from.
func TargetForSnapshot(docs clientopenapi.Client, groups []*restmapper.APIGroupResources) Target {
	return Target{
		Schemas: builtinSchemas().Combine(&resolver.ClientDiscoveryResolver{Discovery: openAPIOnly{docs: docs}}),
		Mapper:  restmapper.NewDiscoveryRESTMapper(groups),
	}
}

// builtinSchemas is kro's compiled-in resolver, built once: its definitions table is large.
var builtinSchemas = sync.OnceValue(func() *resolver.DefinitionsSchemaResolver {
	return resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, scheme.Scheme)
})

// openAPIOnly is a discovery client that serves OpenAPI v3 documents only: the discovery
// resolver asks for nothing else. Any other call panics on the nil embedded interface, which a
// test would show at once.
type openAPIOnly struct {
	discovery.DiscoveryInterface
	docs clientopenapi.Client
}

func (o openAPIOnly) OpenAPIV3() clientopenapi.Client { return o.docs }
