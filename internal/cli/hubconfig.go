package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// hubFlags says how to reach the hub: --hub-kubeconfig and --hub-context, else the usual
// KUBECONFIG / ~/.kube/config and its current context, as kubectl would.
type hubFlags struct {
	kubeconfig string
	context    string
}

func (h *hubFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&h.kubeconfig, "hub-kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG or ~/.kube/config)")
	cmd.PersistentFlags().StringVar(&h.context, "hub-context", "", "context of the hub in that kubeconfig (default: its current context)")
}

func (h *hubFlags) restConfig() (*rest.Config, error) {
	cfg, err := loadKubeconfig(h.kubeconfig, h.context)
	if err != nil {
		return nil, fmt.Errorf("hub connection: %w (set --hub-kubeconfig or KUBECONFIG)", err)
	}
	return cfg, nil
}

func (h *hubFlags) client() (client.Client, error) {
	cfg, err := h.restConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: install.Scheme()})
}

// loadKubeconfig loads a kubeconfig as kubectl does: an explicit path, else KUBECONFIG, else
// ~/.kube/config; an explicit context, else the current one.
func loadKubeconfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}
