package membership

import (
	"fmt"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DeliveryVerbs are what delivery does with objects (read, watch, server-side apply, prune),
// and nothing more: no escalate or bind (so a delivered Role, ClusterRole or binding can grant
// no more than Flotilla holds itself), no impersonate, approve or sign, and no "*".
var DeliveryVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// deliveredSubresources are the only subresources the grant covers: delivery writes the status
// of an owner on a spoke, and nothing else below an object. Every other subresource (pods/exec,
// pods/attach, pods/portforward, pods/ephemeralcontainers, serviceaccounts/token, */proxy,
// certificatesigningrequests/approval...) is a way to act as someone else or inside a workload.
var deliveredSubresources = sets.New("status", "scale")

// withheldResources are top-level resources delivery never needs: bindings schedule a pod onto
// a node of the caller's choosing, and tokenreviews tell whether any token is valid.
var withheldResources = sets.New(
	schema.GroupResource{Resource: "bindings"},
	schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"},
)

// readableURLs are the non-resource URLs the grant may read, so that a delivered ClusterRole
// may grant reading them (Prometheus' scrape roles, health checks). /logs and /debug are not.
var readableURLs = []string{"/metrics", "/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*", "/version"}

// DefaultAPIGroups are the API groups join grants whole (every resource, "*") though the spoke
// may not serve them yet: kro.run is where fleet APIs' CustomResourceDefinitions go unless
// their ResourceGraphDefinition names another group.
var DefaultAPIGroups = []string{"kro.run"}

// deliveryRules are the rules of DeliveryClusterRole, the default grant, for a spoke serving
// resources (its discovery) and the groups to grant whole besides (JoinOptions.APIGroups).
//
// RBAC has no deny rules, and a rule on resource "*" matches subresources too, so `*/*` would
// include serviceaccounts/token and pods/exec. The grant therefore names what it allows:
//   - a group whose resources have no subresource but status and scale (apps, batch, every
//     group served by CustomResourceDefinitions...) is granted whole, so a CRD added to it
//     later is covered too;
//   - any other group (the core group, certificates.k8s.io...) is granted its top-level
//     resources and their status and scale, by name, as discovery lists them at join;
//   - the groups named in apiGroups are granted whole before the spoke serves them (CRDs the
//     hub delivers later); a group served now with other subresources is refused.
//
// A group the spoke starts serving later, other than those, is not covered until join runs
// again. The grant withholds escalate, bind and impersonate: the API server refuses a Role,
// ClusterRole or binding that grants more than its creator holds, so a delivered binding to
// cluster-admin (or to edit and admin, which include impersonate) is refused on the spoke.
func deliveryRules(resources []*metav1.APIResourceList, apiGroups []string) ([]rbacv1.PolicyRule, error) {
	type group struct {
		resources sets.Set[string]
		whole     bool // no subresource but deliveredSubresources
	}
	groups := map[string]*group{}
	for _, list := range resources {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		g := groups[gv.Group]
		if g == nil {
			g = &group{resources: sets.New[string](), whole: true}
			groups[gv.Group] = g
		}
		for _, r := range list.APIResources {
			name, sub, isSub := strings.Cut(r.Name, "/")
			switch {
			case withheldResources.Has(schema.GroupResource{Group: gv.Group, Resource: name}):
				g.whole = false
			case !isSub:
				g.resources.Insert(name)
			case deliveredSubresources.Has(sub):
				g.resources.Insert(r.Name)
			default:
				g.whole = false
			}
		}
	}
	whole := sets.New[string]()
	for _, name := range apiGroups {
		if err := validateAPIGroup(name); err != nil {
			return nil, err
		}
		if g := groups[name]; g != nil && !g.whole {
			return nil, fmt.Errorf("API group %q cannot be granted whole: the spoke serves subresources of it that delivery never uses (such as %s)", name, exampleWithheld(name))
		}
		whole.Insert(name)
	}
	var named []rbacv1.PolicyRule
	for name, g := range groups {
		if g.whole && name != "" {
			whole.Insert(name)
			continue
		}
		if g.resources.Len() > 0 {
			named = append(named, rbacv1.PolicyRule{APIGroups: []string{name}, Resources: sets.List(g.resources), Verbs: DeliveryVerbs})
		}
	}
	slices.SortFunc(named, func(a, b rbacv1.PolicyRule) int { return strings.Compare(a.APIGroups[0], b.APIGroups[0]) })
	rules := named
	if whole.Len() > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: sets.List(whole), Resources: []string{"*"}, Verbs: DeliveryVerbs})
	}
	return append(rules, rbacv1.PolicyRule{NonResourceURLs: readableURLs, Verbs: []string{"get"}}), nil
}

// validateAPIGroup checks a group named for JoinOptions.APIGroups: a DNS subdomain, never the
// core group or "*".
func validateAPIGroup(name string) error {
	if name == "" || name == "*" {
		return fmt.Errorf("API group %q cannot be granted whole: name the groups of the CustomResourceDefinitions Flotilla will deliver", name)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("API group %q is not a valid group name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

func exampleWithheld(group string) string {
	if group == "certificates.k8s.io" {
		return "certificatesigningrequests/approval"
	}
	return "a proxy, exec or token subresource"
}

// selfAccessRules let ServiceAccount renew its own token and remove itself, and act as the
// per-namespace identities (NamespaceServiceAccount), which are ServiceAccount names in
// Namespace: a Role there can allow impersonating them and no one outside it.
func selfAccessRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{ServiceAccount}, Verbs: []string{"get", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{ServiceAccount}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}},
	}
}

// ValidateRole checks a ClusterRole name given for JoinOptions.Role ("" means the default).
func ValidateRole(role string) error {
	if role == "" {
		return nil
	}
	if errs := content.IsPathSegmentName(role); len(errs) > 0 {
		return fmt.Errorf("--role %q is not a valid ClusterRole name: %s", role, strings.Join(errs, "; "))
	}
	return nil
}

// ValidateAPIGroups checks the groups given for JoinOptions.APIGroups.
func ValidateAPIGroups(groups []string) error {
	for _, g := range groups {
		if err := validateAPIGroup(g); err != nil {
			return err
		}
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
