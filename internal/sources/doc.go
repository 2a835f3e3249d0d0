// Package sources imports clusters that are registered somewhere else on the hub as Flotilla
// Clusters, the one inventory every Placement selects from: kubeconfig Secrets (the
// multicluster-runtime convention), Cluster API Clusters, ClusterProfiles (SIG-Multicluster's
// cluster inventory API) and Argo CD cluster Secrets. Each importer is an ordinary controller on
// hub objects, one file per source; they share the importer, which writes the Clusters.
//
// Importing is read-only: a source object is never written (not even a finalizer or a status),
// and Events are the only thing recorded about it. An imported Cluster carries the label
// flotilla.dev/source (shown as a column) and the annotation flotilla.dev/source-ref naming the
// object it came from. An importer only ever changes or deletes Clusters and Secrets that carry
// its own source label and reference; a joined Cluster, or one of another source, is never
// touched, and a name already taken is reported on the source object.
//
// Before the inventory sees a kubeconfig, the importer reads it through the hardened loader
// (internal/kubeconfig) and identifies the spoke by the UID of its kube-system namespace, the
// identity `flotilla join` records (flotilla.dev/cluster-id): one GET per kubeconfig, remembered
// by its hash. Only then does it write the kubeconfig into a credentials Secret of its own in
// flotilla-system, which the Cluster's spec.credentials names. That copy is the design choice:
// the inventory only ever reads credentials that were identified, so a spoke registered by two
// sources (or joined and imported) is engaged once — a joined Cluster keeps it, otherwise the
// older — and the other source object gets a DuplicateCluster Event; a rotated credential that
// suddenly names another spoke is caught the same way. A kubeconfig the loader refuses (an exec
// plugin, a file reference) is copied as it is, so that the Cluster carries the inventory's
// KubeconfigInvalid condition and nothing is engaged. A spoke that cannot be identified yet
// (unreachable, or credentials it rejects) is not imported; the source object gets an
// Unidentified Event and the importer retries with backoff.
//
// Whoever may create a source object adds a cluster to the fleet and chooses its labels, which
// every Placement selects on, administrators' included. So each importer reads only the
// namespaces it is told, which only administrators should write to: Cluster API Clusters of
// --cluster-api-namespace and kubeconfig Secrets of --kubeconfig-secret-namespace (both
// flotilla-system by default), Argo CD's Secrets of --argocd-namespace (argocd). The
// identification of a spoke is reported in Flotilla's words (HTTP status, TLS class, timeout),
// never with the text of the server's answer: the server is whatever the kubeconfig names.
//
// The Secrets the importers read hold credentials wherever they are; CredentialSecret knows
// them by what makes an importer read them (labels, types, names), and propagation refuses to
// deliver them.
//
// A source object that is deleted, or stops naming a cluster (a Cluster API cluster that is
// de-provisioned, a Secret that loses its label), deletes its Cluster and credentials Secret:
// that disconnects the spoke and deletes nothing on it. Rotated source credentials rewrite the
// credentials Secret, and the inventory re-engages the spoke as it does for joined clusters.
// A steady fleet costs nothing: an importer writes only what differs from the hub's cache, and
// asks a spoke only about a kubeconfig it has not seen.
package sources
