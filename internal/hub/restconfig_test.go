package hub

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// rateLimiterOf is the rate limiter client-go gives a client built from cfg (nil: none).
func rateLimiterOf(t *testing.T, cfg *rest.Config) flowcontrol.RateLimiter {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.Host = "https://hub.invalid"
	cfg.APIPath = "/api"
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.GetRateLimiter()
}

func TestWritesAheadHaveNoClientSideRateLimit(t *testing.T) {
	if rateLimiterOf(t, &rest.Config{}) == nil {
		t.Fatal("client-go no longer gives a config without a rate a token bucket: this test checks nothing")
	}
	if l := rateLimiterOf(t, unthrottled(&rest.Config{})); l != nil {
		t.Errorf("the hub writes a delivery waits for are rate limited on the client side (%T, %v requests a second)", l, l.QPS())
	}
}

func TestWritesAheadKeepARateTheCallerSets(t *testing.T) {
	cfg := unthrottled(&rest.Config{QPS: 50, Burst: 100})
	if l := rateLimiterOf(t, cfg); l == nil || l.QPS() != 50 {
		t.Errorf("a caller's rate of 50 requests a second is not kept: %v", l)
	}
	limiter := flowcontrol.NewTokenBucketRateLimiter(7, 7)
	if l := rateLimiterOf(t, unthrottled(&rest.Config{RateLimiter: limiter})); l != limiter {
		t.Errorf("a caller's rate limiter is not kept: %v", l)
	}
}
