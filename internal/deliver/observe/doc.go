// Package observe is what the deliverer knows of each cluster's objects between deliveries,
// and how it judges what the spoke watches show:
//
//   - what the last delivery of each owner confirmed there (Confirmed: the hash of each
//     object, which were ready, which drifted and were left so, the statuses written), and
//     which objects spoke events touched since, so a delivery looks again at those only;
//   - the writes of the last moments, which the spoke cache may not show yet (Wrote): a write
//     whose object a spoke event showed at a newer resourceVersion while it was under way
//     (Writing: someone changed it right after) is not trusted over the cache;
//   - what the cluster stores for Flotilla's apply of an object when admission changes it
//     (server forms), so a value admission sets is not drift;
//   - the corrections someone on the cluster keeps undoing (fights), which back off;
//   - whether a change a watch reports needs another look (Cluster.Changed), and whether an
//     object is ready (Ready: kstatus).
//
// It holds no client and never reads or writes a cluster: the deliver package reads the spoke,
// asks the cluster what it would store (a dry run), and tells this package what it found; this
// package answers what is drift, what is ready and what needs another look, and when. One
// Cluster per spoke, safe for concurrent use. The only calls it makes out are to the wanted
// function a sweep is given, so the deliverer never calls it while holding a lock of its own.
package observe
