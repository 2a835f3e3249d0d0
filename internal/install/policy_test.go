package install

import "testing"

// The chart installs the same policy for its ServiceAccount (chart.TestChartDeliveryPolicy);
// here, only the refusals.
func TestDeliveryPolicyNeedsAController(t *testing.T) {
	if _, _, err := DeliveryPolicy(" "); err == nil {
		t.Errorf("a policy for an empty user name was made")
	}
	if _, _, err := DeliveryPolicy(); err == nil {
		t.Errorf("a policy for no user was made: no one could write records")
	}
	if _, _, err := DeliveryPolicy(DefaultController); err != nil {
		t.Error(err)
	}
}
