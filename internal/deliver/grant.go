package deliver

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// explainForbidden says of a request the spoke's authorizer refused that the spoke's grant to
// Flotilla does not allow it, naming the ClusterRole when it is known. Other refusals, such
// as an admission plugin's (a quota, pod security), are returned as they are: only the
// authorizer's denial reads "User … cannot …".
func (w *clusterWorker) explainForbidden(err error) error {
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "`) || !strings.Contains(err.Error(), `" cannot `) {
		return err
	}
	if grant := w.d.opts.Grant; grant != nil {
		if role := grant(w.name); role != "" {
			return fmt.Errorf("forbidden by the spoke's grant (ClusterRole %s): %w", role, err)
		}
	}
	return fmt.Errorf("forbidden by the spoke's grant to Flotilla's credentials: %w", err)
}
