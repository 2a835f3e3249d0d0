package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// hubFlags says how to reach the hub: --kubeconfig and --context, as kubectl has them (also
// spelled --hub-kubeconfig and --hub-context), else the usual KUBECONFIG / ~/.kube/config and
// its current context. join and unjoin have their own --kubeconfig and --context, for the
// spoke; there the hub is given with --hub-kubeconfig and --hub-context.
type hubFlags struct {
	kubeconfig string
	context    string
	// hub, when set (by tests), is the client every command uses.
	hub client.WithWatch
}

func (h *hubFlags) register(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&h.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&h.context, "context", "", "context of the hub in that kubeconfig (default: its current context)")
	f.StringVar(&h.kubeconfig, "hub-kubeconfig", "", "the same as --kubeconfig (in join and unjoin, whose --kubeconfig is the spoke's, the hub's kubeconfig)")
	f.StringVar(&h.context, "hub-context", "", "the same as --context (in join and unjoin, the hub's context)")
}

func (h *hubFlags) restConfig() (*rest.Config, error) {
	cfg, err := loadKubeconfig(h.kubeconfig, h.context)
	switch {
	case err == nil:
		return cfg, nil
	case clientcmd.IsEmptyConfig(err) || h.kubeconfig != "" && !exists(h.kubeconfig):
		return nil, noHubKubeconfig(h.kubeconfig, os.Getenv(clientcmd.RecommendedConfigPathEnvVar), clientcmd.RecommendedHomeFile)
	}
	return nil, fmt.Errorf("hub connection: %w (set --hub-kubeconfig or KUBECONFIG)", err)
}

// noHubKubeconfig says where a hub kubeconfig was looked for (the flag's file, else the files
// of KUBECONFIG, else the home file) and what to do next, instead of client-go's advice.
func noHubKubeconfig(flag, env, home string) error {
	var tried string
	switch {
	case flag != "":
		tried = "--hub-kubeconfig " + flag + " " + fileState(flag)
	case env != "":
		var files []string
		for _, f := range filepath.SplitList(env) {
			if f != "" {
				files = append(files, f+" "+fileState(f))
			}
		}
		tried = "--hub-kubeconfig is not set, and KUBECONFIG names " + strings.Join(files, ", ")
	default:
		tried = "--hub-kubeconfig and KUBECONFIG are not set, and " + home + " " + fileState(home)
	}
	return fmt.Errorf("no hub to connect to: %s; pass --hub-kubeconfig FILE or set KUBECONFIG=FILE to the hub's kubeconfig "+
		"(a local fleet of `flotilla dev up` has .flotilla/dev/hub.kubeconfig)", tried)
}

// fileState says why a kubeconfig file gave no cluster.
func fileState(path string) string {
	if !exists(path) {
		return "does not exist"
	}
	return "has no cluster for its current context"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// client returns a client of the hub, once one discovery request has found Flotilla's API there.
func (h *hubFlags) client() (client.WithWatch, error) { return h.clientWithin(hubCheckTimeout) }

// clientWithin is client with the hub's check bounded by timeout (shorter for completions).
func (h *hubFlags) clientWithin(timeout time.Duration) (client.WithWatch, error) {
	if h.hub != nil {
		return h.hub, nil
	}
	cfg, err := h.restConfig()
	if err != nil {
		return nil, err
	}
	if err := servesFlotilla(cfg, timeout); err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: install.Scheme()})
}

// loadKubeconfig loads a kubeconfig as kubectl does: an explicit path, else KUBECONFIG, else
// ~/.kube/config; an explicit context, else the current one.
func loadKubeconfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}
