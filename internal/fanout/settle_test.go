package fanout

import (
	"testing"
	"time"
)

func TestSettle(t *testing.T) {
	var s Settle[string]
	if !s.Waiting("web", "r1", true, time.Hour) {
		t.Fatal("deliveries in flight: the status write waits")
	}
	if !s.Waiting("web", "r1", true, time.Hour) {
		t.Fatal("still within the bound: waits")
	}
	if s.Waiting("web", "r1", true, 0) {
		t.Fatal("past the bound: writes")
	}
	if !s.Waiting("web", "r2", true, 0) {
		t.Fatal("a new revision starts the clock again")
	}
	if s.Waiting("web", "r2", false, time.Hour) {
		t.Fatal("nothing in flight: writes")
	}
	s.Forget("web")
	if !s.Waiting("web", "r2", true, time.Hour) {
		t.Fatal("forgotten: the clock starts again")
	}
}
