package propagation

// SetMaxClusterResults lowers the bound of status.clusterResults, so a test can place an owner
// on more clusters than its status lists. Call it before the controller starts; the returned
// function restores the bound (after the controller stopped).
func SetMaxClusterResults(n int) (restore func()) {
	old := maxClusterResults
	maxClusterResults = n
	return func() { maxClusterResults = old }
}
