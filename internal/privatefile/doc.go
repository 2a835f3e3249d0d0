// Package privatefile writes files that hold credentials (an agent's hub kubeconfig, a work
// token): readable and writable by their owner alone, and replaced in one rename, so that a
// reader (an agent reading its token for every request, a restarted agent) never sees half of
// one and no other user of the machine ever sees one.
package privatefile
