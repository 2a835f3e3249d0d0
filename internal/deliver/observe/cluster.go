package observe

import (
	"sync"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// Cluster is what the deliverer knows of one cluster's objects. The zero value is ready to
// use.
type Cluster struct {
	mu        sync.Mutex
	confirmed map[render.Owner]*Confirmed
	touched   map[render.Owner]map[string]bool // objects spoke events touched since, by render.Key
	writes    map[string]write                 // recent writes, by render.Key
	writing   map[string]*inFlight             // writes under way, by render.Key
	sweeping  bool                             // a sweep of writes is scheduled
	forms     map[string]serverForm            // by render.Key
	formSweep int                              // sweep forms when there are this many
	fights    map[string]*fight                // by render.Key
}

// Wanted tells whether owner still delivers the object with this key, and with which hash;
// sweeps ask it to forget what is about objects no longer delivered as they were.
type Wanted func(owner render.Owner, key string) (hash string, ok bool)
