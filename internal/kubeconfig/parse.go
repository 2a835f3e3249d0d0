package kubeconfig

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RefusedError is returned by Parse for a kubeconfig that is not self-contained.
type RefusedError struct {
	// Refused names each refused entry and field, e.g. `user "admin": exec plugin`, sorted.
	Refused []string
}

func (e *RefusedError) Error() string {
	return "refused " + strings.Join(e.Refused, ", ") +
		": a kubeconfig stored on the hub must carry its credentials inline (token, or " +
		"client-certificate-data and client-key-data; certificate-authority-data) and may not " +
		"run plugins or name local files"
}

// Parse parses a kubeconfig read from the hub into a REST config for its current context (or
// its only context, when none is current). It returns a *RefusedError, and runs and reads
// nothing, when any user or cluster entry, used or not, names a plugin or a file.
func Parse(data []byte) (*rest.Config, error) {
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, parseError(err)
	}
	if refused := refusals(raw); len(refused) > 0 {
		return nil, &RefusedError{Refused: refused}
	}
	if raw.CurrentContext == "" && len(raw.Contexts) != 1 {
		return nil, fmt.Errorf("no current-context set and %d contexts to choose from", len(raw.Contexts))
	}
	cc := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{})
	if raw.CurrentContext == "" {
		for name := range raw.Contexts {
			cc = clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil)
		}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Host == "" {
		return nil, fmt.Errorf("no server address")
	}
	return cfg, nil
}

// refusals lists, sorted, what in raw would run a program, read a local file, or carry
// credentials in the server address.
func refusals(raw *clientcmdapi.Config) []string {
	var out []string
	for name, u := range raw.AuthInfos {
		refuse := func(what string) { out = append(out, fmt.Sprintf("user %q: %s", name, what)) }
		if u.Exec != nil {
			refuse("exec plugin")
		}
		if u.AuthProvider != nil {
			refuse("auth-provider plugin")
		}
		if u.TokenFile != "" {
			refuse("tokenFile")
		}
		if u.ClientCertificate != "" {
			refuse("client-certificate file")
		}
		if u.ClientKey != "" {
			refuse("client-key file")
		}
	}
	for name, c := range raw.Clusters {
		refuse := func(what string) { out = append(out, fmt.Sprintf("cluster %q: %s", name, what)) }
		if c.CertificateAuthority != "" {
			refuse("certificate-authority file")
		}
		// The address is never quoted: url.Parse errors would repeat it, userinfo and all.
		if u, err := url.Parse(c.Server); err != nil {
			refuse("server address that is not a URL")
		} else if u.User != nil {
			refuse("credentials in the server address")
		}
	}
	slices.Sort(out)
	return out
}

// yamlLine finds the line number in a YAML error.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// parseError replaces a decoding error, which may quote the document (YAML's "invalid map
// key" prints the key), with one that keeps only the line number.
func parseError(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("not a kubeconfig: it does not parse as YAML or JSON (line %s)", m[1])
	}
	return fmt.Errorf("not a kubeconfig: it does not parse as YAML or JSON")
}
