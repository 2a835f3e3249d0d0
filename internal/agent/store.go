package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flotilla-dev/flotilla/internal/privatefile"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-dev/flotilla/internal/membership"
)

// credentialStore keeps the agent's hub kubeconfig where a restarted agent finds it: a file
// (Options.HubKubeconfig) or a Secret on the spoke (Options.HubKubeconfigSecret). The agent
// writes the renewed credential back to it.
type credentialStore interface {
	load(ctx context.Context) ([]byte, error)
	save(ctx context.Context, data []byte) error
	// String names the store in logs and errors (never its content).
	String() string
}

// fileStore is a kubeconfig file, replaced atomically: a temporary file, readable by its owner
// only, in the same directory, renamed over it.
type fileStore string

func (f fileStore) String() string { return string(f) }

func (f fileStore) load(context.Context) ([]byte, error) { return os.ReadFile(string(f)) }

func (f fileStore) save(_ context.Context, data []byte) error {
	return privatefile.Write(string(f), data)
}

// secretStore is a Secret on the spoke (`flotilla join --mode pull --kubeconfig SPOKE` writes
// membership.AgentCredentialSecret), read and updated with the agent's spoke credentials. An
// update is made on the version read last, so a credential someone wrote meanwhile (a join
// again) is not overwritten: the agent then keeps its renewed one in memory only.
type secretStore struct {
	cs              kubernetes.Interface
	namespace, name string
	resourceVersion string
}

// newSecretStore parses ref, NAMESPACE/NAME.
func newSecretStore(cs kubernetes.Interface, ref string) (*secretStore, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("the hub kubeconfig Secret %q: want NAMESPACE/NAME, e.g. %s/%s", ref, membership.Namespace, membership.AgentCredentialSecret)
	}
	return &secretStore{cs: cs, namespace: ns, name: name}, nil
}

func (s *secretStore) String() string {
	return "secret " + s.namespace + "/" + s.name + " on the spoke"
}

func (s *secretStore) load(ctx context.Context) ([]byte, error) {
	sec, err := s.cs.CoreV1().Secrets(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	data := sec.Data[membership.AgentCredentialKey]
	if len(data) == 0 {
		return nil, fmt.Errorf("%s has no key %q", s, membership.AgentCredentialKey)
	}
	s.resourceVersion = sec.ResourceVersion
	return data, nil
}

func (s *secretStore) save(ctx context.Context, data []byte) error {
	sec, err := s.cs.CoreV1().Secrets(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if sec.ResourceVersion != s.resourceVersion {
		return fmt.Errorf("%s changed since the agent read it (joined again?): not overwritten; restart the agent to use it", s)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[membership.AgentCredentialKey] = data
	updated, err := s.cs.CoreV1().Secrets(s.namespace).Update(ctx, sec, metav1.UpdateOptions{FieldManager: "flotilla-agent"})
	if err != nil {
		return err
	}
	s.resourceVersion = updated.ResourceVersion
	return nil
}

// credentialsGiven counts the hub credentials opts names; the agent takes exactly one.
func credentialsGiven(opts Options) int {
	n := 0
	for _, v := range []string{opts.TokenFile, opts.HubKubeconfig, opts.HubKubeconfigSecret} {
		if v != "" {
			n++
		}
	}
	return n
}

// hubTokens is the token source opts name: a token file, or a hub kubeconfig (a file or a
// spoke Secret) the agent renews.
func hubTokens(ctx context.Context, opts Options) (tokenSource, error) {
	var store credentialStore
	switch {
	case opts.HubKubeconfig != "":
		store = fileStore(opts.HubKubeconfig)
	case opts.HubKubeconfigSecret != "":
		cs, err := kubernetes.NewForConfig(opts.Spoke)
		if err != nil {
			return nil, err
		}
		if store, err = newSecretStore(cs, opts.HubKubeconfigSecret); err != nil {
			return nil, err
		}
	default:
		return fileToken(opts.TokenFile), nil
	}
	return newRenewingToken(ctx, store, opts.Cluster, time.Now, ctrllog.FromContext(ctx).WithName("agent"))
}
