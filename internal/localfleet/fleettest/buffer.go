package fleettest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a logger or a process writes to while the test reads it,
// for instance to look for a canary value that must never be logged.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
