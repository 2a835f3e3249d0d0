package logkeys

import (
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// The keys.
const (
	Cluster = "cluster"
	Owner   = "owner"
)

// ForOwners is the log constructor of a controller whose requests are owners: each reconcile's
// lines carry the controller's name, the owner (ownerOf the request) and its namespace and
// name; controller-runtime adds the reconcileID.
func ForOwners(mgr manager.Manager, controller string, ownerOf func(reconcile.Request) render.Owner) func(*reconcile.Request) logr.Logger {
	base := mgr.GetLogger().WithValues("controller", controller)
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return base
		}
		return base.WithValues(Owner, ownerOf(*req).String(), "namespace", req.Namespace, "name", req.Name)
	}
}
