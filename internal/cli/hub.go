package cli

import (
	"errors"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/shard"
)

func newHubCommand(hf *hubFlags) *cobra.Command {
	opts := hub.Options{
		MetricsAddr:             ":8080",
		HealthAddr:              ":8081",
		LeaderElection:          true,
		LeaderElectionNamespace: "flotilla-system",
	}
	var zapOpts zap.Options
	var dashboardAddr string
	var sharded bool
	var replica shard.Options
	logFormat := logFormatJSON
	cmd := &cobra.Command{
		Use:     "hub",
		Short:   "Run the Flotilla hub controller",
		GroupID: groupOperate,
		Long: `Run the hub controller against the hub API server: it connects to every joined spoke,
probes its health and capacity, and reports them on the Cluster objects.

Run it where it can reach the hub and every spoke. Replicas elect one leader through a Lease in
--leader-election-namespace; the others wait. Install the CRDs first with 'flotilla install'.

With --shard, replicas divide the clusters between them instead of waiting: each delivers to the
clusters it holds (rendezvous hashing over the live replicas, a fence Lease per cluster in
--leader-election-namespace so that one replica at most writes to a cluster), and the elected
one also runs the owner controllers, the scheduler and every status write. A replica that dies
has its clusters taken over once its Leases expire (15s; within 5s when it stops gracefully). Give each replica its own
--replica-name (its Pod name). See docs/ha.md.

ClusterPropagations deliver cluster-scoped objects and objects in any namespace; they may use
only Placements in an --admin-namespace (flotilla-system unless told otherwise), so that the
users of a tenant namespace cannot steer or empty an administrator's delivery by editing a
Placement of theirs.

Clusters registered elsewhere are imported as Clusters, read-only, by importers that
--import-* flags turn off one by one; each is on by default where the hub serves its source's
kind, and the log says at start-up which run. See docs/clusters.md.`,
		Example: `  # Against the hub of 'flotilla dev up', without leader election
  flotilla hub --hub-kubeconfig .flotilla/dev/hub.kubeconfig --leader-elect=false

  # Three replicas dividing the clusters (each with its own name)
  flotilla hub --shard --replica-name hub-0

  # Logs as JSON lines, for a log pipeline (the default unless --zap-devel)
  flotilla hub --log-format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-format") {
				logFormat = "" // the --zap-* flags decide, as before --log-format existed
			}
			logger, err := hubLogger(logFormat, zapOpts)
			if err != nil {
				return err
			}
			ctrl.SetLogger(logger)
			cfg, err := hf.restConfig()
			if err != nil {
				return err
			}
			if sharded {
				if !opts.LeaderElection {
					return errors.New("--shard needs --leader-elect: the replicas divide the clusters, and the elected one alone runs the owner controllers and writes status")
				}
				if replica.ID == "" {
					replica.ID = os.Getenv("POD_NAME")
				}
				if replica.ID == "" {
					return errors.New("--shard needs --replica-name (or POD_NAME): each replica's name among its peers")
				}
				replica.Namespace = opts.LeaderElectionNamespace
				opts.Shard = &replica
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if dashboardAddr == "" {
				return hub.Run(ctx, cfg, opts)
			}
			return runWithDashboard(ctx, cfg, opts, dashboardAddr, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", opts.MetricsAddr, "address of the Prometheus metrics endpoint, served over HTTPS to scrapers the hub API server authenticates (TokenReview) and authorizes for get on /metrics (ClusterRole flotilla-metrics-reader); 0 disables it")
	f.BoolVar(&opts.MetricsPlainHTTP, "metrics-plain-http", false, "serve metrics as plain HTTP without authentication, for local development; refused unless --metrics-bind-address is a loopback address")
	f.StringVar(&opts.HealthAddr, "health-probe-bind-address", opts.HealthAddr, "address of /healthz and /readyz; 0 disables them")
	f.BoolVar(&opts.LeaderElection, "leader-elect", opts.LeaderElection, "elect one active replica through a Lease")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", opts.LeaderElectionNamespace, "namespace of the leader election Lease")
	f.BoolVar(&sharded, "shard", false, "divide the clusters between the hub's replicas: each delivers to the clusters it holds, the elected one runs the owner controllers (see docs/ha.md)")
	f.StringVar(&replica.ID, "replica-name", "", "this replica's name among its peers with --shard, unique per replica (default: $POD_NAME)")
	f.StringSliceVar(&opts.AdminNamespaces, "admin-namespace", []string{"flotilla-system"}, "namespaces whose Placements ClusterPropagations may use (repeat or separate with commas); whoever may edit a Placement steers where the objects using it go, so these must be namespaces only cluster administrators write to")
	f.StringVar(&dashboardAddr, "dashboard-bind-address", "", "address of the fleet dashboard, where each request acts with its caller's bearer token (checked with TokenReview, every object shown with SubjectAccessReview) and sees what the caller may read on the hub; serve it behind TLS; empty disables it")
	f.StringVar(&opts.WorkAddr, "work-bind-address", "", "address where pull-mode agents read their cluster's work (GET /clusters/NAME/work), each with a token of its cluster's ServiceAccount flotilla-system/agent-NAME for audience "+clusterwork.Audience+"; the responses carry Secret data, so without --work-cert-file only a loopback address is accepted (development); empty disables it")
	f.StringVar(&opts.WorkCertFile, "work-cert-file", "", "TLS certificate of the work endpoint (PEM; reloaded when it changes)")
	f.StringVar(&opts.WorkKeyFile, "work-key-file", "", "TLS private key of the work endpoint (PEM)")
	f.StringVar(&logFormat, "log-format", logFormat, "log format: json (one JSON object a line, with the keys cluster and owner where a line is about one) or text; the --zap-* flags tune the rest")
	f.StringVar(&opts.PprofAddr, "pprof-bind-address", "", "address of Go's pprof profiles (/debug/pprof/), e.g. 127.0.0.1:6060; empty disables them")
	f.DurationVar(&opts.VerifyInterval, "verify-interval", 10*time.Minute, "how often every delivered object is compared with the spoke caches, a backstop to the spoke watches that writes only what differs; negative disables it")
	f.DurationVar(&opts.Inventory.ProbeInterval, "probe-interval", 10*time.Second, "how often each spoke's health is probed")
	f.DurationVar(&opts.Inventory.ProbeTimeout, "probe-timeout", 5*time.Second, "how long one probe may take")
	f.Int64Var(&opts.Inventory.CacheBytesPerCluster, "spoke-cache-bytes", inventory.DefaultCacheBytesPerCluster, "bound on what one spoke's cache keeps whole of Flotilla's delivered objects, in estimated bytes of JSON; objects past it are read from the spoke when needed and their drift is found by deliveries, not watches (metric flotilla_spoke_cache_full)")
	f.BoolVar(&opts.Sources.KubeconfigSecrets, "import-kubeconfig-secrets", true, "import Secrets labelled sigs.k8s.io/multicluster-runtime-kubeconfig=true in --kubeconfig-secret-namespace as Clusters (key kubeconfig, cluster named after the Secret)")
	f.BoolVar(&opts.Sources.ClusterAPI, "import-cluster-api", true, "import provisioned Cluster API clusters (cluster.x-k8s.io v1beta2 or v1beta1) of --cluster-api-namespace with their labels, credentials from their <cluster>-kubeconfig Secret; on only where the hub serves Cluster API")
	f.StringSliceVar(&opts.Sources.ClusterAPINamespaces, "cluster-api-namespace", []string{"flotilla-system"}, "namespaces whose Cluster API clusters are imported (repeat or separate with commas); whoever may create a Cluster API Cluster there adds a cluster to the fleet and chooses the labels Placements select, so these must be namespaces only cluster administrators write to")
	f.BoolVar(&opts.Sources.ArgoCD, "import-argocd", true, "import Argo CD cluster Secrets (argocd.argoproj.io/secret-type=cluster) in --argocd-namespace with their labels; bearer-token and TLS client-certificate credentials only; on only where the hub serves Argo CD")
	f.StringVar(&opts.Sources.ArgoCDNamespace, "argocd-namespace", "argocd", "namespace of Argo CD's cluster Secrets")
	f.BoolVar(&opts.Sources.ClusterProfiles, "import-cluster-profiles", true, "import ClusterProfiles (multicluster.x-k8s.io/v1alpha1) of other cluster managers, with the kubeconfig Secret their manager gives --cluster-profile-consumer; on only where the hub serves ClusterProfiles")
	f.StringVar(&opts.Sources.ClusterProfileConsumer, "cluster-profile-consumer", "flotilla", "consumer name under which cluster managers give Flotilla credentials for their ClusterProfiles (namespace label x-k8s.io/cluster-inventory-consumer)")
	f.BoolVar(&opts.Sources.PublishClusterProfiles, "publish-cluster-profiles", true, "keep a ClusterProfile for every Cluster in --cluster-profile-namespace (x-k8s.io/cluster-manager=flotilla); on only where the hub serves ClusterProfiles")
	f.StringVar(&opts.Sources.ClusterProfileNamespace, "cluster-profile-namespace", "flotilla-system", "namespace of the ClusterProfiles Flotilla publishes")
	f.StringVar(&opts.Sources.KubeconfigSecretNamespace, "kubeconfig-secret-namespace", "flotilla-system", "namespace whose labelled kubeconfig Secrets are imported; whoever may write Secrets there may add clusters to the fleet")
	goFlags := flag.NewFlagSet("flotilla", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	f.AddGoFlagSet(goFlags)
	return cmd
}
