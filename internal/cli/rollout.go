package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// newRolloutCommand is `flotilla rollout`: where a Propagation's rollout stands, and the
// controls a person has over it.
func newRolloutCommand(hf *hubFlags) *cobra.Command {
	namespace := "default"
	cmd := &cobra.Command{
		Use:     "rollout",
		Short:   "Follow and steer the stage-by-stage rollout of a Propagation's new revision",
		GroupID: groupFleet,
		Long: `A Placement with spec.rollout takes each new revision of the Propagations that use it to
its clusters stage by stage: a stage starts once the one before is done (every cluster Ready at
the new revision) and soaked, and, when it asks for approval, approved.

  status   where the rollout stands, stage by stage (--watch: until it completes or halts)
  approve  let the stage that waits for approval start
  undo     return every cluster to the revision before (or --to-revision N)
  history  the kept revisions, and how many clusters run each
  pause    reach no further cluster (the Placement's spec.rollout.paused); resume undoes it`,
		Example: `  flotilla rollout status settings -n team --watch
  flotilla rollout approve settings -n team
  flotilla rollout undo settings -n team
  flotilla rollout history settings -n team
  flotilla rollout pause placement/all -n team
  flotilla rollout resume placement/all -n team`,
	}
	cmd.PersistentFlags().StringVarP(&namespace, "namespace", "n", namespace, "namespace of the Propagation or Placement")
	cmd.AddCommand(newRolloutStatusCommand(hf, &namespace), newRolloutApproveCommand(hf, &namespace),
		newRolloutUndoCommand(hf, &namespace), newRolloutHistoryCommand(hf, &namespace),
		newRolloutPauseCommand(hf, &namespace, true), newRolloutPauseCommand(hf, &namespace, false))
	return cmd
}

func newRolloutStatusCommand(hf *hubFlags, namespace *string) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "status [propagation/]NAME",
		Short: "Show where a Propagation's rollout stands; exits 1 when it halted or was undone",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, p, err := rolloutOwner(cmd.Context(), hf, *namespace, args[0])
			if err != nil {
				return err
			}
			ctx, w := cmd.Context(), cmd.OutOrStdout()
			var last string
			for {
				if shown := rolloutText(p); shown != last {
					_, _ = fmt.Fprint(w, shown)
					last = shown
				}
				r := p.Status.Rollout
				switch {
				case r != nil && (r.Phase == flotillav1.RolloutHalted || r.Phase == flotillav1.RolloutRolledBack):
					return ExitError{Code: 1}
				case !watch || (r != nil && r.Phase == flotillav1.RolloutComplete) || r == nil:
					return nil
				}
				if err := waitForChange(ctx, hub, p); err != nil {
					return err
				}
				if err := hub.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
					return notFoundHint(err, "propagation", client.ObjectKeyFromObject(p))
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print each change until the rollout completes (exit 0) or halts (exit 1)")
	return cmd
}

// rolloutText is what status prints of a Propagation's rollout.
func rolloutText(p *flotillav1.Propagation) string {
	r := p.Status.Rollout
	if r == nil {
		return fmt.Sprintf("Propagation %s/%s: no rollout (its Placement sets no spec.rollout, or nothing has rolled out yet)\n", p.Namespace, p.Name)
	}
	var b strings.Builder
	_, _ = fmt.Fprintf(&b, "Propagation %s/%s: revision %s %s: %s\n", p.Namespace, p.Name, r.Revision, r.Phase, r.Message)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "STAGE\tCLUSTERS\tDONE\tIN-FLIGHT\tFAILED\tPENDING")
	for _, s := range r.Stages {
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, s.Clusters, s.Done, s.InFlight, s.Failed, s.Pending)
	}
	_ = tw.Flush()
	return b.String()
}

// waitForChange returns once the object changes on the hub (or after a minute, to look again).
func waitForChange(ctx context.Context, hub client.WithWatch, p *flotillav1.Propagation) error {
	list := &flotillav1.PropagationList{}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := hub.Watch(ctx, list, client.InNamespace(p.Namespace), client.MatchingFields{"metadata.name": p.Name})
	if err != nil {
		return fmt.Errorf("watch propagation %s/%s: %w", p.Namespace, p.Name, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if obj, isProp := ev.Object.(*flotillav1.Propagation); isProp && obj.ResourceVersion != p.ResourceVersion {
				return nil
			}
		}
	}
}

func newRolloutApproveCommand(hf *hubFlags, namespace *string) *cobra.Command {
	var stage string
	cmd := &cobra.Command{
		Use:   "approve [propagation/]NAME",
		Short: "Let the rollout stage that waits for approval start",
		Long: `Approve the stage the Propagation's rollout waits for (or --stage), for the revision rolling
out: the same as kubectl annotate propagation NAME flotilla.dev/approve=<stage>@<revision>.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, p, err := rolloutOwner(cmd.Context(), hf, *namespace, args[0])
			if err != nil {
				return err
			}
			key, name := client.ObjectKeyFromObject(p), p.Name
			r := p.Status.Rollout
			if r == nil || r.Revision == "" {
				return fmt.Errorf("propagation %s has no rollout under way; flotilla rollout status %s -n %s says why", key, name, key.Namespace)
			}
			if stage == "" {
				if r.Phase != flotillav1.RolloutWaitingForApproval {
					return fmt.Errorf("the rollout of %s is %s, not waiting for approval; name the stage to approve ahead with --stage", key, r.Phase)
				}
				stage = rollout.WaitingStage(r)
			}
			value := stage + "@" + r.Revision
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, flotillav1.AnnotationApprove, value)
			if err := hub.Patch(cmd.Context(), p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				return fmt.Errorf("approve %s: %w", key, err)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "propagation.flotilla.dev/%s approved: stage %s of revision %s\n", name, stage, r.Revision)
			return nil
		},
	}
	cmd.Flags().StringVar(&stage, "stage", "", "the stage to approve (default: the one the rollout waits for)")
	return cmd
}

func newRolloutPauseCommand(hf *hubFlags, namespace *string, pause bool) *cobra.Command {
	use, short := "pause", "Reach no further cluster in the rollouts of a Placement's owners (spec.rollout.paused)"
	if !pause {
		use, short = "resume", "Go on with the rollouts of a Placement's owners"
	}
	return &cobra.Command{
		Use:   use + " placement/NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, err := hf.client()
			if err != nil {
				return err
			}
			name, found := strings.CutPrefix(args[0], "placement/")
			if !found {
				return usageError(fmt.Errorf("%s takes placement/NAME (the rollout policy is the Placement's), got %q", use, args[0]))
			}
			key := client.ObjectKey{Namespace: *namespace, Name: name}
			pl := &flotillav1.Placement{}
			if err := hub.Get(cmd.Context(), key, pl); err != nil {
				return notFoundHint(err, "placement", key)
			}
			if pl.Spec.Rollout == nil {
				return fmt.Errorf("placement %s has no spec.rollout: its owners' revisions go everywhere at once, there is nothing to %s", key, use)
			}
			patch := fmt.Sprintf(`{"spec":{"rollout":{"paused":%t}}}`, pause)
			if err := hub.Patch(cmd.Context(), pl, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				return fmt.Errorf("%s %s: %w", use, key, err)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "placement.flotilla.dev/%s %sd\n", name, use)
			return nil
		},
	}
}

// rolloutOwner reads from the hub the Propagation arg names (NAME or propagation/NAME).
func rolloutOwner(ctx context.Context, hf *hubFlags, namespace, arg string) (client.WithWatch, *flotillav1.Propagation, error) {
	hub, err := hf.client()
	if err != nil {
		return nil, nil, err
	}
	name, err := propagationName(arg)
	if err != nil {
		return nil, nil, err
	}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	p := &flotillav1.Propagation{}
	if err := hub.Get(ctx, key, p); err != nil {
		return nil, nil, notFoundHint(err, "propagation", key)
	}
	return hub, p, nil
}

// propagationName takes NAME or propagation/NAME.
func propagationName(arg string) (string, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		return arg, nil
	}
	if kind != "propagation" && kind != "propagations" && kind != "fprop" {
		return "", usageError(fmt.Errorf("rollouts are of Propagations (propagation/NAME) for now, got %q", arg))
	}
	return name, nil
}

// notFoundHint says what to do when an object is not on the hub.
func notFoundHint(err error, kind string, key client.ObjectKey) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s not found on the hub; list them with kubectl get %ss -n %s", kind, key.Name, kind, key.Namespace)
	}
	return err
}
