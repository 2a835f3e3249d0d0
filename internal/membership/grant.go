package membership

import (
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
)

// deliveryVerbs are what delivery does with objects (read, watch, server-side apply, prune),
// and nothing more: no escalate or bind (so a delivered Role, ClusterRole or binding can grant
// no more than Flotilla holds itself), no impersonate, approve or sign, and no "*".
var deliveryVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// deliveryRules are the rules of DeliveryClusterRole, the default grant.
//
// Flotilla delivers whatever kinds hub admins choose, CRDs and their instances included, so
// the kinds cannot be listed in advance, and RBAC has no deny rules: the grant covers every
// resource with deliveryVerbs. What it withholds is the power to raise privileges through
// RBAC itself. The API server refuses a Role or binding that grants more than its creator
// holds unless the creator may escalate or bind; Flotilla may not, so a delivered
// ClusterRoleBinding to cluster-admin (or to edit and admin, which include impersonate) is
// refused on the spoke. Non-resource URLs are readable, so that delivered ClusterRoles may
// grant reading /metrics and the like.
//
// It is not a sandbox: the grant still creates workloads that run as any ServiceAccount and
// requests tokens (serviceaccounts/token) and executes into pods (pods/exec) through
// subresources, which a "*" resource rule includes. A spoke admin who wants less binds a
// ClusterRole of their own (JoinOptions.Role).
func deliveryRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: deliveryVerbs},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}
}

// selfAccessRules let ServiceAccount renew its own token and remove itself, and nothing else.
func selfAccessRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{ServiceAccount}, Verbs: []string{"get", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{ServiceAccount}, Verbs: []string{"create"}},
	}
}

// ValidateRole checks a ClusterRole name given for JoinOptions.Role ("" means the default).
func ValidateRole(role string) error {
	if role == "" {
		return nil
	}
	if errs := path.IsValidPathSegmentName(role); len(errs) > 0 {
		return fmt.Errorf("--role %q is not a valid ClusterRole name: %s", role, strings.Join(errs, "; "))
	}
	return nil
}

// ValidateTokenLifetime checks a token lifetime given for JoinOptions.TokenLifetime (0 means
// DefaultTokenLifetime).
func ValidateTokenLifetime(d time.Duration) error {
	if d == 0 {
		return nil
	}
	if d < MinTokenLifetime || d > MaxTokenLifetime {
		return fmt.Errorf("token lifetime %s is out of bounds: it must be between %s (the API server's minimum) and %s",
			d, MinTokenLifetime, MaxTokenLifetime)
	}
	if d%time.Second != 0 {
		return fmt.Errorf("token lifetime %s must be a whole number of seconds", d)
	}
	return nil
}
