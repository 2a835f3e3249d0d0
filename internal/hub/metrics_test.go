package hub

import "testing"

func TestMetricsOptions(t *testing.T) {
	for _, tc := range []struct {
		addr         string
		plain        bool
		secure, fail bool
	}{
		{":8080", false, true, false},
		{"0.0.0.0:8080", false, true, false},
		{"127.0.0.1:8080", true, false, false},
		{"[::1]:8080", true, false, false},
		{"localhost:8080", true, false, false},
		{":8080", true, false, true},
		{"0.0.0.0:8080", true, false, true},
		{"10.0.0.1:8080", true, false, true},
		{"0", true, false, false},
	} {
		o, err := metricsOptions(tc.addr, tc.plain)
		if (err != nil) != tc.fail {
			t.Errorf("%s plain=%v: %v", tc.addr, tc.plain, err)
			continue
		}
		if err == nil && (o.SecureServing != tc.secure || (o.FilterProvider != nil) != tc.secure) {
			t.Errorf("%s plain=%v: secure %v, filter %v", tc.addr, tc.plain, o.SecureServing, o.FilterProvider != nil)
		}
	}
}
