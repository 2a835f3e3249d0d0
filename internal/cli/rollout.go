package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// rolloutKinds is how `flotilla rollout` names the owners it takes, for help and errors.
const rolloutKinds = `  NAME, propagation/NAME
      a Propagation: status.rollout; pause sets its Placement's spec.rollout.paused
  clusterpropagation/NAME, fcprop/NAME
      a ClusterPropagation: the same
  deployment/NAME, configmap/NAME, statefulset/NAME, ... (-n NAMESPACE)
      a transparent-mode object on the hub, named as flotilla plan names it: status from its
      Rollout* Events of its newest kept revision, advisory (a Deployment's with its fleet status
      fields); approve and undo annotate it, for its newest kept revision; pause sets a
      Deployment's own spec.paused (as kubectl rollout pause does), any other kind's
      Placement's spec.rollout.paused
  rgd/NAME, resourcegraphdefinition/NAME
      an RGD under the APIPropagation that serves it: status from its Rollout* Events of its
      newest kept revision, advisory, and the APIPropagation's per-cluster rows; approve and undo
      annotate the RGD, for its newest kept revision; pause sets the APIPropagation's
      Placement's spec.rollout.paused
  placement/NAME
      pause and resume only: every owner using the Placement`

// newRolloutCommand is `flotilla rollout`: where an owner's rollout stands, and the controls a
// person has over it, for every owner kind.
func newRolloutCommand(hf *hubFlags) *cobra.Command {
	namespace := "default"
	cmd := &cobra.Command{
		Use:     "rollout",
		Short:   "Follow and steer the stage-by-stage rollout of an owner's new revision",
		GroupID: groupFleet,
		Long: `A Placement with spec.rollout takes each new revision of the owners that use it (Propagations,
ClusterPropagations, transparent-mode objects, the RGDs an APIPropagation serves) to its
clusters stage by stage: a stage starts once the one before is done (every cluster Ready at the
new revision) and soaked, and, when it asks for approval, approved.

  status   where the rollout stands, stage by stage (--watch: until it completes or halts)
  approve  let the stage that waits for approval start (flotilla.dev/approve on the owner)
  undo     return every cluster to the revision before, or --to-revision N (flotilla.dev/undo)
  history  the kept revisions, and how many clusters run each
  pause    reach no further cluster; resume undoes it

Owners:
` + rolloutKinds,
		Example: `  # A Propagation (a bare NAME), or a ClusterPropagation
  flotilla rollout status settings -n team --watch
  flotilla rollout approve settings -n team
  flotilla rollout status clusterpropagation/crds

  # A transparent-mode Deployment on the hub (kubectl rollout status deployment/web works too)
  flotilla rollout status deployment/web -n shop
  flotilla rollout pause deployment/web -n shop

  # An RGD's rollout under its APIPropagation
  flotilla rollout approve rgd/webapp
  flotilla rollout undo rgd/webapp

  flotilla rollout history settings -n team
  flotilla rollout pause placement/all -n team
  flotilla rollout resume placement/all -n team`,
	}
	cmd.PersistentFlags().StringVarP(&namespace, "namespace", "n", namespace, "namespace of the owner or Placement")
	cmd.AddCommand(newRolloutStatusCommand(hf, &namespace), newRolloutApproveCommand(hf, &namespace),
		newRolloutUndoCommand(hf, &namespace), newRolloutHistoryCommand(hf, &namespace),
		newRolloutPauseCommand(hf, &namespace, true), newRolloutPauseCommand(hf, &namespace, false))
	return cmd
}

func newRolloutStatusCommand(hf *hubFlags, namespace *string) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "status [KIND/]NAME",
		Short: "Show where an owner's rollout stands; exits 1 when it halted or was undone",
		Long: `Show where an owner's rollout stands, stage by stage, and where that was read: a Propagation's
or ClusterPropagation's status.rollout, or for an owner without a status of Flotilla's (a
transparent-mode object, an RGD) its latest Rollout* Event of its newest kept revision, with a
hub Deployment's fleet status fields (an RGD: with its APIPropagation's per-cluster rows, which
only Flotilla writes). Event-sourced status is advisory: anyone who may create Events in the
namespace can write one (an RGD's are in default); Events are ordered by when the API server
created them, and those of any other revision are ignored. --watch prints each change until the
rollout of the owner's latest change (its newest kept revision; a Propagation's or
ClusterPropagation's status at its generation) completes (exit 0) or halts or is undone (exit 1).

Owners:
` + rolloutKinds,
		Example: `  flotilla rollout status settings -n team --watch
  flotilla rollout status clusterpropagation/crds
  flotilla rollout status deployment/web -n shop
  flotilla rollout status rgd/webapp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, o, err := rolloutOwnerOf(cmd.Context(), hf, *namespace, args[0])
			if err != nil {
				return err
			}
			ctx, w := cmd.Context(), cmd.OutOrStdout()
			var last string
			for {
				rep, _, latest, err := readRollout(ctx, hub, o)
				if err != nil {
					return err
				}
				r := rep.rollout
				// --watch waits for the rollout of the owner's newest kept revision, as of its
				// latest change: not the result an earlier one left.
				var waiting string
				switch {
				case rep.behind != "":
					waiting = rep.behind
				case r != nil && latest != "" && r.Revision != latest:
					waiting = fmt.Sprintf("%s reports revision %s, but the newest kept revision is %s", rep.source, r.Revision, latest)
				case r != nil && rep.unconfirmed != "":
					waiting = rep.unconfirmed
				}
				shown := rolloutText(o, rep)
				if watch && waiting != "" {
					shown += fmt.Sprintf("waiting: %s\n", waiting)
				}
				if shown != last {
					_, _ = fmt.Fprint(w, shown)
					last = shown
				}
				switch {
				case watch && waiting != "":
				case r != nil && rep.unconfirmed == "" && (r.Phase == flotillav1.RolloutHalted || r.Phase == flotillav1.RolloutRolledBack):
					return ExitError{Code: 1}
				case !watch || (r != nil && r.Phase == flotillav1.RolloutComplete) || r == nil:
					return nil
				}
				if err := waitForChange(ctx, hub, o, rep.eventsVersion); err != nil {
					return err
				}
				if err := reload(ctx, hub, o); err != nil {
					return fmt.Errorf("read %s again: %w", o.what(), err)
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print each change until the rollout completes (exit 0) or halts (exit 1)")
	return cmd
}

// rolloutText is what status prints of an owner's rollout.
func rolloutText(o rolloutOwner, rep rolloutReport) string {
	var b strings.Builder
	r := rep.rollout
	if r == nil {
		_, _ = fmt.Fprintf(&b, "%s: no rollout (its Placement sets no spec.rollout, or nothing has rolled out yet; read from %s)\n", o.what(), rep.source)
	} else {
		_, _ = fmt.Fprintf(&b, "%s: revision %s %s: %s\n", o.what(), r.Revision, r.Phase, r.Message)
		_, _ = fmt.Fprintf(&b, "(from %s)\n", rep.source)
	}
	for _, line := range rep.extra {
		_, _ = fmt.Fprintln(&b, line)
	}
	if r != nil && len(r.Stages) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "STAGE\tSTATE\tCLUSTERS\tDONE\tIN-FLIGHT\tFAILED\tPENDING")
		for _, s := range r.Stages {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, orNone(string(s.State)), s.Clusters, s.Done, s.InFlight, s.Failed, s.Pending)
		}
		_ = tw.Flush()
	}
	if rep.unconfirmed != "" {
		_, _ = fmt.Fprintf(&b, "not borne out: %s\n", rep.unconfirmed)
	}
	if len(rep.clusters) > 0 {
		// Since is a timestamp, not an age: a watch prints again only what changed.
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "CLUSTER\tSTAGE\tSTATE\tREVISION\tSINCE")
		for _, c := range rep.clusters {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.cluster, orNone(c.state.Stage), c.state.State, orNone(c.state.Revision), c.state.Since.UTC().Format(time.RFC3339))
		}
		_ = tw.Flush()
	}
	return b.String()
}

func newRolloutApproveCommand(hf *hubFlags, namespace *string) *cobra.Command {
	var stage string
	cmd := &cobra.Command{
		Use:   "approve [KIND/]NAME",
		Short: "Let the rollout stage that waits for approval start",
		Long: `Approve the stage the owner's rollout waits for (or --stage), for the revision rolling out:
the same as kubectl annotate KIND NAME flotilla.dev/approve=<stage>@<revision> on the owner (an
RGD's rollout: on the RGD). The revision is status.rollout's for a Propagation or
ClusterPropagation, and the owner's newest kept revision (ControllerRevision) for a
transparent-mode object or an RGD, never one an Event names. The stage must be one of its
Placement's spec.rollout.stages with approval: Required; without --stage, the one the status
says waits, if it is such a stage.

Owners:
` + rolloutKinds,
		Example: `  flotilla rollout approve settings -n team
  flotilla rollout approve settings -n team --stage prod
  flotilla rollout approve deployment/web -n shop
  flotilla rollout approve rgd/webapp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, o, err := rolloutOwnerOf(ctx, hf, *namespace, args[0])
			if err != nil {
				return err
			}
			rep, _, latest, err := readRollout(ctx, hub, o)
			if err != nil {
				return err
			}
			revision := rollingRevision(rep, latest)
			if revision == "" {
				return fmt.Errorf("%s has no rollout under way; flotilla rollout status %s says why", o.what(), argHint(args[0], o))
			}
			required, where, err := approvalStages(ctx, hub, o)
			if err != nil {
				return err
			}
			if stage != "" {
				if !required[stage] {
					return fmt.Errorf("stage %q is not a stage of %s that requires approval (%s); name one with --stage", stage, where, stageList(required))
				}
			} else {
				r := rep.rollout
				if r == nil || r.Phase != flotillav1.RolloutWaitingForApproval {
					phase := "not reported"
					if r != nil {
						phase = string(r.Phase)
					}
					return fmt.Errorf("the rollout of %s is %s, not waiting for approval; name the stage to approve ahead with --stage", o.what(), phase)
				}
				asked := waitingStage(r, rollout.WaitingStage)
				if asked == "" {
					return fmt.Errorf("the rollout of %s waits for approval, but %s does not say of which stage; name it with --stage", o.what(), rep.source)
				}
				if !required[asked] {
					return fmt.Errorf("%s names stage %q as waiting, which is not a stage of %s that requires approval (%s); pass --stage to name the stage to approve",
						rep.source, asked, where, stageList(required))
				}
				stage = asked
			}
			value := stage + "@" + revision
			if err := annotate(ctx, hub, o, flotillav1.AnnotationApprove, value); err != nil {
				return fmt.Errorf("approve %s: %w", o.what(), err)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "%s approved: stage %s of revision %s\n", o.what(), stage, revision)
			return nil
		},
	}
	cmd.Flags().StringVar(&stage, "stage", "", "the stage to approve (default: the one the rollout waits for)")
	return cmd
}

// readRollout reads where the owner's rollout stands, with its kept revisions (oldest first)
// and the newest's name ("" when it keeps none).
func readRollout(ctx context.Context, hub client.Reader, o rolloutOwner) (rolloutReport, []revisions.Revision, string, error) {
	kept, err := (&revisions.Store{Metadata: hub}).List(ctx, o.revisionsOwner())
	if err != nil {
		return rolloutReport{}, nil, "", err
	}
	var latest string
	if len(kept) > 0 {
		latest = kept[len(kept)-1].Name
	}
	rep, err := o.readStatus(ctx, hub, latest)
	return rep, kept, latest, err
}

// rollingRevision is the revision approve and undo act on: status.rollout's, which only
// Flotilla writes, or for an owner whose rollout is read from Events its newest kept revision
// (ControllerRevisions, which the store lists by owner label and tenants cannot write), never
// an Event's.
func rollingRevision(rep rolloutReport, latest string) string {
	if rep.advisory {
		return latest
	}
	if rep.rollout == nil {
		return ""
	}
	return rep.rollout.Revision
}

// approvalStages are the stages of the owner's Placement's spec.rollout, true for those with
// approval: Required; and the Placement, for messages.
func approvalStages(ctx context.Context, hub client.Reader, o rolloutOwner) (map[string]bool, string, error) {
	key, found, err := o.placement(ctx, hub)
	if err != nil {
		return nil, "", fmt.Errorf("find the Placement of %s: %w", o.what(), err)
	}
	if !found {
		return nil, "", fmt.Errorf("no Placement rolls %s out, so no stage of it waits for approval", o.what())
	}
	pl := &flotillav1.Placement{}
	if err := hub.Get(ctx, key, pl); err != nil {
		return nil, "", notFoundHint(err, "placement", key)
	}
	where := "placement " + key.String()
	out := map[string]bool{}
	if pl.Spec.Rollout != nil {
		for _, s := range pl.Spec.Rollout.Stages {
			out[s.Name] = s.Approval == flotillav1.ApprovalRequired
		}
	}
	return out, where, nil
}

// stageList names the stages that require approval, for messages.
func stageList(required map[string]bool) string {
	var names []string
	for n, r := range required {
		if r {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "it has none"
	}
	sort.Strings(names)
	return "those that do: " + strings.Join(names, ", ")
}

// annotate sets an annotation on the owner's object.
func annotate(ctx context.Context, hub client.Client, o rolloutOwner, key, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	return hub.Patch(ctx, o.object(), client.RawPatch("application/merge-patch+json", []byte(patch)))
}

func newRolloutPauseCommand(hf *hubFlags, namespace *string, pause bool) *cobra.Command {
	use, short := "pause", "Reach no further cluster in an owner's rollout (or every rollout of a Placement)"
	long := `Pause a rollout: no further cluster gets the new revision; those in flight finish. For a
Propagation, ClusterPropagation, RGD or transparent object other than a Deployment this sets
spec.rollout.paused of its Placement, which pauses every owner using it; for a transparent
Deployment it sets the hub Deployment's own spec.paused (as kubectl rollout pause does), which
pauses its fleet rollout alone. resume undoes it.

Owners:
` + rolloutKinds
	if !pause {
		use, short = "resume", "Go on with a paused rollout"
	}
	return &cobra.Command{
		Use:   use + " [KIND/]NAME",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  flotilla rollout %[1]s placement/all -n team
  flotilla rollout %[1]s settings -n team
  flotilla rollout %[1]s deployment/web -n shop
  flotilla rollout %[1]s rgd/webapp`, use),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, err := hf.client()
			if err != nil {
				return err
			}
			var done string
			if arg, perr := parseOwnerArg(args[0]); perr == nil && arg.kind == kindPlacement {
				done, err = pausePlacement(ctx, hub, client.ObjectKey{Namespace: *namespace, Name: arg.name}, pause)
			} else {
				var o rolloutOwner
				if o, err = resolveRolloutOwner(ctx, hub, args[0], *namespace); err == nil {
					done, err = o.pause(ctx, hub, pause)
				}
			}
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintln(cmd.OutOrStdout(), done)
			return nil
		},
	}
}

// rolloutOwnerOf reads from the hub the owner arg names.
func rolloutOwnerOf(ctx context.Context, hf *hubFlags, namespace, arg string) (client.WithWatch, rolloutOwner, error) {
	hub, err := hf.client()
	if err != nil {
		return nil, nil, err
	}
	o, err := resolveRolloutOwner(ctx, hub, arg, namespace)
	if err != nil {
		return nil, nil, err
	}
	return hub, o, nil
}

// argHint is the owner argument with its namespace flag, for a command to suggest.
func argHint(arg string, o rolloutOwner) string {
	if ns := o.object().GetNamespace(); ns != "" {
		return arg + " -n " + ns
	}
	return arg
}

// notFoundHint says what to do when an object is not on the hub.
func notFoundHint(err error, kind string, key client.ObjectKey) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s not found on the hub; list them with kubectl get %ss -n %s", kind, key.Name, kind, key.Namespace)
	}
	return err
}
