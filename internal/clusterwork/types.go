package clusterwork

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Work is what GET /clusters/{cluster}/work returns: every owner's work on the cluster.
type Work struct {
	Cluster string `json:"cluster"`
	// Items are one per trusted Delivery record of the cluster, by record namespace and name.
	Items []Item `json:"items"`
}

// Item is one owner's work on the cluster, as its Delivery record says.
type Item struct {
	Owner flotillav1.DeliveryOwner `json:"owner"`
	// Record is the Delivery record, namespace/name.
	Record string `json:"record"`
	// RecordUID and Generation are the record's UID and metadata.generation, which grows with
	// every change of its spec: an agent that was served a generation never goes back to an
	// older one of the same record (a hub replica whose cache lags answers with older work).
	RecordUID  string `json:"recordUID,omitempty"`
	Generation int64  `json:"generation,omitempty"`
	// Revision, Digest and Strategy are the record's spec.work: the owner's revision the
	// cluster runs, the digest of the objects as the cluster runs them (what the record's
	// status.revision reports once they are delivered), and how to apply them.
	Revision string                          `json:"revision,omitempty"`
	Digest   string                          `json:"digest,omitempty"`
	Strategy *flotillav1.PropagationStrategy `json:"strategy,omitempty"`
	// Objects are what the cluster must run of the owner: the revision's objects with the
	// cluster's changes, Secrets with their data.
	Objects []*unstructured.Unstructured `json:"objects,omitempty"`
	// PruneConfirmed is the owner's flotilla.dev/confirm-prune annotation on the hub, which
	// lets the agent prune beyond the owner's budget as the hub's deliveries would.
	PruneConfirmed string `json:"pruneConfirmed,omitempty"`
	// Pending says why Objects are absent: the record has no work yet, or its work cannot be
	// resolved now. The agent keeps what it runs of this owner.
	Pending string `json:"pending,omitempty"`
}

// Results is what an agent posts to POST /clusters/{cluster}/results: the latest result of
// each owner it delivers, for the owners' Delivery records. It carries counts and a message,
// never objects.
type Results struct {
	Items []Result `json:"items"`
}

// Result is one owner's latest delivery result on the cluster (from deliver.Result).
type Result struct {
	// Record is the Delivery record the work came from, namespace/name (Item.Record).
	Record string `json:"record"`
	// Revision is the digest of the objects delivered (Item.Digest): a result for a digest the
	// record no longer asks for is stale and not written.
	Revision string `json:"revision"`
	// Complete says the revision is delivered whole (and pruned, if asked).
	Complete bool `json:"complete,omitempty"`
	Applied  int  `json:"applied"`
	Ready    int  `json:"ready"`
	Failed   int  `json:"failed"`
	Drifted  int  `json:"drifted,omitempty"`
	Fighting int  `json:"fighting,omitempty"`
	// Message says what failed or waits (bounded by the record's status.message).
	Message string `json:"message,omitempty"`
	// Reason names why the revision is not served, in one CamelCase word, when the agent
	// knows (a fleet API that does not compile on the spoke: CompileFailed, SchemaNotFound,
	// BreakingChange, Conflict, ...): the record's status.reason. A reason that is not such a
	// word is not written.
	Reason string `json:"reason,omitempty"`
}

// Written is the answer to a post: how many results were written into records, and, for each
// result not written, why (stale, not the cluster's record). It names records, never objects.
type Written struct {
	Written int               `json:"written"`
	Skipped map[string]string `json:"skipped,omitempty"`
}
