// Package install puts Flotilla on a hub with server-side apply. ApplyObjects applies a whole
// installation (what `flotilla install` renders from the chart: CRDs, namespace, RBAC, the
// controller Deployment, its Service, the Delivery policy) and waits until the API server
// serves the CRDs; Apply puts only the CRDs and the Delivery policy, for a controller run
// outside the hub (`flotilla dev up`, the tests, `flotilla install --crds-only`). Release and
// Holdings serve `flotilla uninstall`. It does not import Helm: internal/install/chart renders
// the chart.
package install
