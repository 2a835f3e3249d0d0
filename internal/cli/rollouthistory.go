package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

func newRolloutUndoCommand(hf *hubFlags, namespace *string) *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo [KIND/]NAME",
		Short: "Return every cluster to the revision before the one rolling out",
		Long: `Undo the rollout of an owner's latest revision: every cluster its Placement chooses (but those
a person pins with spec.revisionPins) returns to the revision before it, or to --to-revision N
(a kept revision: flotilla rollout history lists them), and stays there for as long as the
latest revision is the same. The same as

  kubectl annotate KIND NAME flotilla.dev/undo=<target>@<latest>

on the owner (an RGD's rollout: on the RGD). <latest> is status.rollout's revision for a
Propagation or ClusterPropagation, and the owner's newest kept revision for a transparent-mode
object or an RGD (never one an Event names). Nothing on the hub changes but that annotation:
remove it to roll the latest revision out again (from its first stage); the owner's next change
rolls out as usual.

Owners:
` + rolloutKinds,
		Example: `  flotilla rollout undo settings -n team
  flotilla rollout undo settings -n team --to-revision 3
  flotilla rollout undo deployment/web -n shop
  flotilla rollout undo rgd/webapp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, o, err := rolloutOwnerOf(ctx, hf, *namespace, args[0])
			if err != nil {
				return err
			}
			rep, kept, latest, err := readRollout(ctx, hub, o)
			if err != nil {
				return err
			}
			revision := rollingRevision(rep, latest)
			if revision == "" {
				return fmt.Errorf("%s has no rollout to undo; flotilla rollout status %s says why", o.what(), argHint(args[0], o))
			}
			target, err := undoTarget(kept, revision, toRevision)
			if err != nil {
				return fmt.Errorf("undo the rollout of %s: %w; flotilla rollout history %s lists the kept revisions", o.what(), err, argHint(args[0], o))
			}
			if err := annotate(ctx, hub, o, flotillav1.AnnotationUndo, target.Name+"@"+revision); err != nil {
				return fmt.Errorf("undo %s: %w", o.what(), err)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "%s rolled back: revision %s to %s (revision %d)\n", o.what(), revision, target.Name, target.Number)
			return nil
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "the revision number to return to (default: the one before the latest)")
	return cmd
}

// undoTarget is the kept revision an undo of latest returns to: number, or the newest kept
// before latest.
func undoTarget(kept []revisions.Revision, latest string, number int64) (revisions.Revision, error) {
	var at int64 = -1
	for _, k := range kept {
		if k.Name == latest {
			at = k.Number
		}
	}
	var target revisions.Revision
	for _, k := range kept {
		switch {
		case number > 0 && k.Number == number:
			if k.Name == latest {
				return target, fmt.Errorf("revision %d is the one rolling out", number)
			}
			return k, nil
		case number == 0 && k.Name != latest && (at < 0 || k.Number < at) && k.Number > target.Number:
			target = k
		}
	}
	if number > 0 {
		return target, fmt.Errorf("revision %d is not kept", number)
	}
	if target.Name == "" {
		return target, fmt.Errorf("no revision before %s is kept", latest)
	}
	return target, nil
}

func newRolloutHistoryCommand(hf *hubFlags, namespace *string) *cobra.Command {
	return &cobra.Command{
		Use:   "history [KIND/]NAME",
		Short: "List an owner's kept revisions and how many clusters run each",
		Long: `List the revisions an owner keeps (its ControllerRevisions, oldest first; an RGD's are in the
admin namespace), how many clusters run each as their Delivery records say, and which is
rolling out. A kept revision is what flotilla rollout undo --to-revision and spec.revisionPins
name.

Owners:
` + rolloutKinds,
		Example: `  flotilla rollout history settings -n team
  flotilla rollout history clusterpropagation/crds
  flotilla rollout history deployment/web -n shop
  flotilla rollout history rgd/webapp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, o, err := rolloutOwnerOf(ctx, hf, *namespace, args[0])
			if err != nil {
				return err
			}
			rep, kept, _, err := readRollout(ctx, hub, o)
			if err != nil {
				return err
			}
			owner := o.revisionsOwner()
			running, err := runningRevisions(ctx, hub, owner)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprint(cmd.OutOrStdout(), historyText(o, rep.rollout, kept, running))
			return nil
		},
	}
}

// runningRevisions counts the clusters each of owner's revisions runs on, as its trusted
// Delivery records say (spec.work).
func runningRevisions(ctx context.Context, hub client.Client, owner render.Owner) (map[string]int, error) {
	records, err := (&ledger.Ledger{Hub: hub, Owners: flotillahub.RecordOwners()}).Records(ctx, owner)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, rec := range records {
		if w := rec.Spec.Work; w != nil && w.Revision != "" {
			out[w.Revision]++
		}
	}
	return out, nil
}

// historyText is what history prints.
func historyText(o rolloutOwner, r *flotillav1.RolloutStatus, kept []revisions.Revision, running map[string]int) string {
	var b strings.Builder
	if len(kept) == 0 {
		return fmt.Sprintf("%s keeps no revision yet\n", o.what())
	}
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "REVISION\tNAME\tCLUSTERS\tNOTE")
	undoTo, undone, undoing := flotillav1.ParseUndo(o.object().GetAnnotations()[flotillav1.AnnotationUndo])
	for _, k := range kept {
		var note []string
		if r != nil && r.Revision == k.Name {
			note = append(note, "latest ("+string(r.Phase)+")")
		}
		if undoing && k.Name == undoTo && r != nil && r.Revision == undone {
			note = append(note, "undo target")
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", k.Number, k.Name, running[k.Name], strings.Join(note, ", "))
	}
	_ = tw.Flush()
	return b.String()
}
