package inventory

import (
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/intern"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// pullSnapshot is what the inventory knows of a pull cluster (Cluster.spec.mode Pull): the hub
// never connects to it, reads no credentials for it and probes nothing. It is Ready, with
// reason PullMode, so that Placements choose it; its agent fetches its work and reports the
// results into its Delivery records, which say how delivery there goes.
var pullSnapshot = snapshot{obs: observation{
	status:  metav1.ConditionTrue,
	reason:  flotillav1.ReasonPullMode,
	message: "the hub does not connect to this cluster: its agent (flotilla agent) fetches its work from the hub's work endpoint and reports the results in its Delivery records",
}}

// LocalCluster builds the controller-runtime cluster a pull-mode agent delivers to: the spoke
// it runs on, with the cache an engaged spoke has on the hub (only objects carrying
// Flotilla's owner label, within the same byte budget, read the same way), so that the
// deliverer behaves there as it does from the hub. name is the cluster's name on the hub.
// The caller starts it and engages it into its deliverer.
func LocalCluster(cfg *rest.Config, name string, scheme *runtime.Scheme, log logr.Logger) (cluster.Cluster, error) {
	budget := newCacheBudget(name, DefaultCacheBytesPerCluster, log)
	spoke := newSpokeCache(name, nil, budget, intern.NewTable(internLimit, internMaxLen))
	return cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache.DefaultTransform = spoke.transform
		o.Cache.NewInformer = spoke.newInformer
		o.Cache.DefaultWatchErrorHandler = newWatchErrors(name, log).handle
		o.Cache.DefaultLabelSelector = render.ManagedSelector()
		o.NewCache = spoke.newCache
	})
}
