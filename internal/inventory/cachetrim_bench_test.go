package inventory

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-dev/flotilla/internal/intern"
)

// spokeObjectJSON is object i of a delivery as cluster c's API server returns it: a ConfigMap
// with 256 bytes of data (as make bench delivers) or a Deployment, every other one.
func spokeObjectJSON(c, i int) []byte { return spokeObjectJSONSized(c, i, 256) }

// spokeObjectJSONSized is spokeObjectJSON with size bytes of data in each ConfigMap. Name,
// data and spec are the same on every cluster; uid, resourceVersion and creationTimestamp are
// the cluster's own.
func spokeObjectJSONSized(c, i, size int) []byte {
	meta := fmt.Sprintf(`"metadata":{"name":"web-%d","namespace":"team","uid":"%08d-0000-4000-8000-%012d","resourceVersion":"%d",`+
		`"creationTimestamp":"2026-01-0%dT10:00:00Z","labels":{"app":"web","flotilla.dev/owner":"o-3f9a2c7d1e"},`+
		`"annotations":{"flotilla.dev/owner":"Propagation/team/web","flotilla.dev/hash":"5d41402abc4b2a76b9719d911017c592"},`+
		`"managedFields":[{"manager":"flotilla","operation":"Apply","apiVersion":"v1","time":"2026-01-01T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:payload":{}}}}]}`,
		i, c, i, 1000*c+i, c%9+1)
	if i%2 == 0 {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap",%s,"data":{"payload":"%0*d"}}`, meta, size, i)
	}
	return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment",%s,"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},`+
		`"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%%","maxUnavailable":"25%%"}},"template":{"metadata":{"labels":{"app":"web"}},`+
		`"spec":{"containers":[{"name":"web","image":"registry.example.com/team/web:v1.2.3","ports":[{"containerPort":8080,"protocol":"TCP"}],`+
		`"env":[{"name":"MODE","value":"production"},{"name":"REGION","value":"eu"}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}},`+
		`"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],`+
		`"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler","securityContext":{}}}},`+
		`"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3}}`, meta)
}

func decodeSpokeObject(b testing.TB, data []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		b.Fatal(err)
	}
	return u
}

// BenchmarkSpokeObjectTransform is the cost of the transform for one object entering a spoke
// cache (decoding excluded), the object already cached for another cluster: its name and
// content are shared, its uid, resourceVersion and timestamp are the cluster's own.
func BenchmarkSpokeObjectTransform(b *testing.B) {
	transform := newSpokeObjectTransform()
	cached := make([]any, 2) // cluster 0's copies
	for i := range cached {
		cached[i], _ = transform(decodeSpokeObject(b, spokeObjectJSON(0, i)))
	}
	objs := make([][]byte, 4096) // the same two objects on other clusters, each with its own uid
	for k := range objs {
		objs[k] = spokeObjectJSON(1+k, k%2)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		u := decodeSpokeObject(b, objs[i%len(objs)])
		b.StartTimer()
		if _, err := transform(u); err != nil {
			b.Fatal(err)
		}
	}
	runtime.KeepAlive(cached)
}

// BenchmarkSpokeCacheHeap fills ten clusters' caches with the same 1000 objects and reports
// the live heap they hold per (object, cluster), as make bench's heap_per_pair does: with a
// collection between clusters (caches fill at different times, and objects that change are
// decoded again long after another cluster cached them) and without one (the collector still
// runs on its own while they fill).
func BenchmarkSpokeCacheHeap(b *testing.B) {
	const clusters, objects = 10, 1000
	for _, size := range []int{256, 4096} {
		for _, gcBetween := range []bool{true, false} {
			b.Run(fmt.Sprintf("payload=%d/gcBetweenClusters=%v", size, gcBetween), func(b *testing.B) {
				for b.Loop() {
					raw := make([][][]byte, clusters)
					for c := range raw {
						raw[c] = make([][]byte, objects)
						for i := range raw[c] {
							raw[c][i] = spokeObjectJSONSized(c, i, size)
						}
					}
					transform := newSpokeObjectTransform()
					before := liveHeap()
					cached := make([][]any, clusters)
					for c := range cached {
						cached[c] = make([]any, objects)
						for i := range cached[c] {
							cached[c][i], _ = transform(decodeSpokeObject(b, raw[c][i]))
						}
						if gcBetween {
							runtime.GC()
						}
					}
					after := liveHeap()
					b.ReportMetric(float64(int64(after)-int64(before))/(clusters*objects), "B/pair")
					runtime.KeepAlive(cached)
					runtime.KeepAlive(raw)
				}
			})
		}
	}
}

// liveHeap is the heap still reachable after a collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// newSpokeObjectTransform is the transform of whole objects, as every spoke cache has it.
func newSpokeObjectTransform() toolscache.TransformFunc {
	return spokeObjectTransform(intern.NewTable(internLimit, internMaxLen))
}
