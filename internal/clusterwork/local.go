package clusterwork

import (
	"context"
	"net/http"
	"net/http/httptest"
)

// A sharded hub's replicas deliver to the clusters they hold through agents in their own
// process (package shard). Those agents ask the endpoint's handler directly, in memory: no
// network, no token. A request is taken as from the cluster's own agent only when it carries
// the mark Local puts in its context, which no request from the network can carry.

// inProcess marks a request made in this process by a replica's own agent.
type inProcess struct{}

// Local returns a RoundTripper that serves requests with h in this process, as the requests of
// the named cluster's agent: the hub replica's own agents use it.
func Local(h http.Handler) http.RoundTripper { return localTransport{h} }

type localTransport struct{ h http.Handler }

func (t localTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), inProcess{}, true)))
	res := rec.Result()
	res.Request = req
	return res, nil
}

// fromThisProcess reports whether r was made by a replica's own agent (Local).
func fromThisProcess(r *http.Request) bool {
	local, _ := r.Context().Value(inProcess{}).(bool)
	return local
}
