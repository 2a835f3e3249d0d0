package fleetapi

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

func TestCompilesAreCachedByKey(t *testing.T) {
	c := newCompiles()
	now := time.Now()
	c.now = func() time.Time { return now }
	calls := 0
	compile := func(err error) func() (*kro.Compiled, error) {
		return func() (*kro.Compiled, error) { calls++; return nil, err }
	}
	key := compileKey{uid: "u", generation: 1, fingerprint: "f"}

	_, _ = c.get(key, compile(nil))
	_, _ = c.get(key, compile(nil))
	if calls != 1 {
		t.Fatalf("the same key compiled %d times", calls)
	}
	other := key
	other.fingerprint = "g"
	_, _ = c.get(other, compile(nil))
	if calls != 2 {
		t.Fatalf("another fingerprint compiled %d times in all, want 2", calls)
	}

	missing := compileKey{uid: "u", generation: 1, fingerprint: "missing"}
	notFound := &kro.SchemaNotFoundError{ResourceID: "x", Err: kro.ErrSchemaNotFound}
	_, err := c.get(missing, compile(notFound))
	if !errors.As(err, &notFound) {
		t.Fatalf("error %v", err)
	}
	_, _ = c.get(missing, compile(notFound))
	if calls != 3 {
		t.Fatalf("a missing kind was compiled again at once (%d compiles)", calls)
	}
	now = now.Add(missingKindRetry)
	_, _ = c.get(missing, compile(notFound))
	if calls != 4 {
		t.Fatalf("a missing kind was not compiled again after %s (%d compiles)", missingKindRetry, calls)
	}

	unreadable := compileKey{uid: "u", generation: 1, fingerprint: "unreadable"}
	_, _ = c.get(unreadable, compile(&kro.TargetError{Err: errors.New("timeout")}))
	_, _ = c.get(unreadable, compile(nil))
	if calls != 6 {
		t.Fatalf("an unreadable cluster's compile was cached (%d compiles)", calls)
	}

	invalid := compileKey{uid: "u", generation: 1, fingerprint: "invalid"}
	_, _ = c.get(invalid, compile(&kro.InvalidGraphError{Err: errors.New("cycle")}))
	now = now.Add(time.Hour)
	_, _ = c.get(invalid, compile(nil))
	if calls != 7 {
		t.Fatalf("an invalid graph was compiled again for the same key (%d compiles)", calls)
	}

	_, _ = c.get(compileKey{uid: "u", generation: 2, fingerprint: "f"}, compile(nil))
	if _, ok := c.entries[invalid]; !ok || len(c.entries) != 2 {
		t.Fatalf("%d entries after generation 2: the older generation used a moment ago (a held cluster's) is dropped, or unused ones are kept", len(c.entries))
	}
	now = now.Add(olderKept)
	_, _ = c.get(compileKey{uid: "u", generation: 2, fingerprint: "g"}, compile(nil))
	if _, ok := c.entries[invalid]; ok || len(c.entries) != 2 {
		t.Fatalf("%d entries: an older generation unused for %s is kept", len(c.entries), olderKept)
	}
	c.forget("u")
	if n := len(c.entries); n != 0 {
		t.Fatalf("%d entries after forget", n)
	}
}

func TestCompilesPerRGDAreBounded(t *testing.T) {
	c := newCompiles()
	now := time.Now()
	c.now = func() time.Time { now = now.Add(time.Second); return now }
	for i := 0; i < 3*maxCompilesPerRGD; i++ {
		_, _ = c.get(compileKey{uid: "u", generation: 1, fingerprint: fmt.Sprint(i)}, func() (*kro.Compiled, error) { return nil, nil })
	}
	if n := len(c.entries); n != maxCompilesPerRGD {
		t.Fatalf("%d compiles kept, want %d", n, maxCompilesPerRGD)
	}
	if _, ok := c.entries[compileKey{uid: "u", generation: 1, fingerprint: fmt.Sprint(3*maxCompilesPerRGD - 1)}]; !ok {
		t.Fatal("the newest compile was dropped")
	}
}
