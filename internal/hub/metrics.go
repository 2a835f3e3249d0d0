package hub

import (
	"fmt"
	"net"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics endpoint authenticates and authorizes every scrape against the hub API server:
// the bearer token by a TokenReview, then a SubjectAccessReview for `get` on the non-resource
// URL /metrics, which the ClusterRole flotilla-metrics-reader (config/rbac) grants. Metrics
// name clusters, owners and namespaces of every tenant, so they are not for anyone who can
// reach the port.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serves metrics over HTTPS behind the hub's authentication and authorization
// or, with plainHTTP, as plain HTTP to anyone who connects, which is refused on any address but
// a loopback one (local development).
func metricsOptions(addr string, plainHTTP bool) (metricsserver.Options, error) {
	if addr == "0" {
		return metricsserver.Options{BindAddress: addr}, nil
	}
	if plainHTTP {
		if !loopback(addr) {
			return metricsserver.Options{}, fmt.Errorf("metrics as plain HTTP, without authentication, are served on a loopback address only (127.0.0.1:PORT, [::1]:PORT, localhost:PORT), not %q", addr)
		}
		return metricsserver.Options{BindAddress: addr}, nil
	}
	return metricsserver.Options{BindAddress: addr, SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization}, nil
}

// loopback tells whether a bind address listens on a loopback interface only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
