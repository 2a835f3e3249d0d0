package logkeys

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// loggingManager is a manager whose logger the test reads; nothing else of it is used.
type loggingManager struct {
	manager.Manager
	log logr.Logger
}

func (m loggingManager) GetLogger() logr.Logger { return m.log }

func TestForOwnersNamesTheOwner(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	ownerOf := func(req reconcile.Request) render.Owner {
		return render.Owner{Kind: "Propagation", Namespace: req.Namespace, Name: req.Name}
	}
	construct := ForOwners(loggingManager{log: log}, "propagation", ownerOf)

	construct(&reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "web"}}).Info("Synced")
	construct(nil).Info("Started")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", lines)
	}
	for _, want := range []string{`"controller"="propagation"`, `"owner"="Propagation/team-a/web"`, `"namespace"="team-a"`, `"name"="web"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("a reconcile's line %s lacks %s", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], `"controller"="propagation"`) || strings.Contains(lines[1], "owner") {
		t.Errorf("the controller's own line: %s", lines[1])
	}
}
