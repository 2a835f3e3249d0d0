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
		Use:   "undo [propagation/]NAME",
		Short: "Return every cluster to the revision before the one rolling out",
		Long: `Undo the rollout of a Propagation's latest revision: every cluster its Placement chooses (but
those a person pins with spec.revisionPins) returns to the revision before it, or to
--to-revision N (a kept revision: flotilla rollout history lists them), and stays there for as
long as the latest revision is the same. The same as

  kubectl annotate propagation NAME flotilla.dev/undo=<target>@<latest>

Nothing on the hub changes but that annotation: remove it to roll the latest revision out again
(from its first stage); the Propagation's next change rolls out as usual.`,
		Example: `  flotilla rollout undo settings -n team
  flotilla rollout undo settings -n team --to-revision 3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, p, err := rolloutOwner(ctx, hf, *namespace, args[0])
			if err != nil {
				return err
			}
			key := client.ObjectKeyFromObject(p)
			r := p.Status.Rollout
			if r == nil || r.Revision == "" {
				return fmt.Errorf("propagation %s has no rollout to undo; flotilla rollout status %s -n %s says why", key, p.Name, key.Namespace)
			}
			kept, err := (&revisions.Store{Metadata: hub}).List(ctx, propagationOwner(p))
			if err != nil {
				return err
			}
			target, err := undoTarget(kept, r.Revision, toRevision)
			if err != nil {
				return fmt.Errorf("undo the rollout of %s: %w; flotilla rollout history %s -n %s lists the kept revisions", key, err, p.Name, key.Namespace)
			}
			value := target.Name + "@" + r.Revision
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, flotillav1.AnnotationUndo, value)
			if err := hub.Patch(ctx, p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				return fmt.Errorf("undo %s: %w", key, err)
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "propagation.flotilla.dev/%s rolled back: revision %s to %s (revision %d)\n", p.Name, r.Revision, target.Name, target.Number)
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
		Use:   "history [propagation/]NAME",
		Short: "List a Propagation's kept revisions and how many clusters run each",
		Long: `List the revisions a Propagation keeps (its ControllerRevisions, oldest first), how many
clusters run each as their Delivery records say, and which is rolling out. A kept revision is
what flotilla rollout undo --to-revision and spec.revisionPins name.`,
		Example: `  flotilla rollout history settings -n team`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, p, err := rolloutOwner(ctx, hf, *namespace, args[0])
			if err != nil {
				return err
			}
			owner := propagationOwner(p)
			kept, err := (&revisions.Store{Metadata: hub}).List(ctx, owner)
			if err != nil {
				return err
			}
			running, err := runningRevisions(ctx, hub, owner)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprint(cmd.OutOrStdout(), historyText(p, kept, running))
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
func historyText(p *flotillav1.Propagation, kept []revisions.Revision, running map[string]int) string {
	var b strings.Builder
	if len(kept) == 0 {
		return fmt.Sprintf("Propagation %s/%s keeps no revision yet\n", p.Namespace, p.Name)
	}
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "REVISION\tNAME\tCLUSTERS\tNOTE")
	undoTo, undone, undoing := flotillav1.ParseUndo(p.Annotations[flotillav1.AnnotationUndo])
	for _, k := range kept {
		var note []string
		if r := p.Status.Rollout; r != nil && r.Revision == k.Name {
			note = append(note, "latest ("+string(r.Phase)+")")
		}
		if undoing && k.Name == undoTo && p.Status.Rollout != nil && p.Status.Rollout.Revision == undone {
			note = append(note, "undo target")
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", k.Number, k.Name, running[k.Name], strings.Join(note, ", "))
	}
	_ = tw.Flush()
	return b.String()
}

// propagationOwner is a Propagation as the owner of its records and revisions.
func propagationOwner(p *flotillav1.Propagation) render.Owner {
	return render.Owner{Kind: "Propagation", Namespace: p.Namespace, Name: p.Name}
}
