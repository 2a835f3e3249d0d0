package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/install/chart"
)

// installOptions are install's flags.
type installOptions struct {
	namespace   string
	valueFiles  []string
	sets        []string
	dryRun      string
	crdsOnly    bool
	controllers []string
}

func newInstallCommand(hf *hubFlags) *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:     "install",
		Short:   "Install a Flotilla hub (CRDs, RBAC, the controller) on a Kubernetes cluster",
		GroupID: groupOperate,
		Long: `Install everything a hub needs on the cluster the hub kubeconfig points at: Flotilla's
CustomResourceDefinitions (and kro's ResourceGraphDefinition CRD where nobody installed it),
the namespace, the controller's ServiceAccount and least-privilege roles, the controller
Deployment (replicas elect a leader), a Service for its metrics, the ValidatingAdmissionPolicy
that lets only the controller write Delivery records, and, when asked, a ServiceMonitor and a
PrometheusRule.

The objects are the Helm chart charts/flotilla, built into this binary and rendered with Helm's
engine: --set and --values take the chart's values (see its values.yaml, or docs/operations.md),
so 'flotilla install', 'helm install' and the kustomize base config/default install the same
objects. Every object is server-side applied (field manager flotilla); running it again changes
nothing, and after an upgrade of flotilla it updates the hub.

--dry-run (or --dry-run=client) prints the objects as YAML and touches nothing;
--dry-run=server has the hub check them without keeping them.

--crds-only installs only the CRDs and the Delivery policy, for a controller you run yourself
with 'flotilla hub': the users --controller-user names may then write Delivery records (default:
the chart's ServiceAccount and the hub kubeconfig's user).`,
		Example: `  # Install a hub, then watch the controller start
  flotilla install --kubeconfig hub.kubeconfig
  kubectl -n flotilla-system rollout status deployment/flotilla-hub

  # See what would be installed, as YAML
  flotilla install --dry-run

  # Three replicas of a given image, without the Argo CD importer
  flotilla install --set replicas=3 --set image.tag=v0.2.0 --set importers.argoCD.enabled=false

  # Values from a file, and Prometheus Operator objects
  flotilla install -f my-values.yaml --set metrics.serviceMonitor.enabled=true

  # Only the CRDs, for 'flotilla hub' run by hand
  flotilla install --crds-only --hub-kubeconfig .flotilla/dev/hub.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, hf)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", chart.DefaultNamespace, "namespace of the controller, its Lease and the spokes' credentials")
	f.StringArrayVarP(&o.valueFiles, "values", "f", nil, "a YAML file of chart values (repeatable; later files win)")
	f.StringArrayVar(&o.sets, "set", nil, "a chart value, as helm's --set takes it: key=value, key.sub=value, list[0]=value (repeatable)")
	f.StringVar(&o.dryRun, "dry-run", "none", `"client" prints the objects as YAML; "server" has the hub check them without keeping them`)
	f.Lookup("dry-run").NoOptDefVal = "client"
	f.BoolVar(&o.crdsOnly, "crds-only", false, "install only the CRDs and the Delivery policy, for a controller run with 'flotilla hub'")
	f.StringSliceVar(&o.controllers, "controller-user", nil,
		"a user (as 'kubectl auth whoami' names it) that may write Delivery records besides the controller's ServiceAccount; with --crds-only, default "+install.DefaultController+" and the hub kubeconfig's user")
	return cmd
}

func (o *installOptions) run(cmd *cobra.Command, hf *hubFlags) error {
	out := cmd.OutOrStdout()
	progress := func(line string) { _, _ = fmt.Fprintln(out, line) }
	switch o.dryRun {
	case "none", "client", "server":
	default:
		return fmt.Errorf(`--dry-run=%q: want client (print the objects) or server (have the hub check them)`, o.dryRun)
	}
	if o.crdsOnly {
		if o.dryRun != "none" || len(o.sets) > 0 || len(o.valueFiles) > 0 {
			return fmt.Errorf("--crds-only takes no --dry-run, --set or --values: drop them, or drop --crds-only to install the whole hub")
		}
		cfg, err := hf.restConfig()
		if err != nil {
			return err
		}
		if len(o.controllers) == 0 {
			self, err := install.Whoami(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			o.controllers = []string{install.DefaultController, self}
		}
		return install.Apply(cmd.Context(), cfg, o.controllers, progress)
	}
	rendering, err := o.render()
	if err != nil {
		return err
	}
	if o.dryRun == "client" {
		_, err := fmt.Fprint(out, rendering.Manifest)
		return err
	}
	cfg, err := hf.restConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		return err
	}
	if err := install.ApplyObjects(cmd.Context(), c, rendering.Objects, o.dryRun == "server", progress); err != nil {
		return fmt.Errorf("%w\n(nothing is rolled back; fix the cause and run 'flotilla install' again: it applies only what differs)", err)
	}
	if o.dryRun == "none" {
		progress(fmt.Sprintf("installed; watch the controller start with: kubectl -n %s rollout status deployment/flotilla-hub", o.namespace))
	}
	return nil
}

// render renders the embedded chart with the flags' values.
func (o *installOptions) render() (*chart.Rendering, error) {
	values, err := chart.Values(o.valueFiles, o.sets)
	if err != nil {
		return nil, err
	}
	if len(o.controllers) > 0 {
		writers, _ := values["deliveryWriters"].([]any)
		for _, u := range o.controllers {
			writers = append(writers, u)
		}
		values["deliveryWriters"] = writers
	}
	c, err := chart.Load()
	if err != nil {
		return nil, err
	}
	return chart.Render(c, chart.Options{Namespace: o.namespace, Values: values})
}
