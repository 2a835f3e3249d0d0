package membership

import (
	"fmt"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// ImportedError is Unjoin's refusal of a Cluster that an importer maintains (it carries
// flotilla.dev/source): the importer would create it again within moments, and join created
// nothing on its spoke to remove. It names the source and how to remove the cluster there.
type ImportedError struct {
	Cluster, Source, Ref string
}

func (e *ImportedError) Error() string {
	return fmt.Sprintf("cluster %s was imported from %s by the hub's importer, not joined with `flotilla join`: "+
		"unjoin changes nothing (the importer would create the Cluster again, and join created nothing on its spoke). "+
		"To take it out of the fleet, remove it at its source: %s; the importer then deletes the Cluster and its "+
		"credentials copy, and what runs on the spoke stays (drain it first with `flotilla cluster drain %s --wait` to move its workloads)",
		e.Cluster, sources.Origin(e.Source, e.Ref), sources.Removal(e.Source, e.Ref), e.Cluster)
}

// imported returns the refusal for a Cluster an importer maintains, or nil.
func imported(c *flotillav1.Cluster) error {
	source := c.Labels[flotillav1.LabelSource]
	if source == "" {
		return nil
	}
	return &ImportedError{Cluster: c.Name, Source: source, Ref: c.Annotations[flotillav1.AnnotationSourceRef]}
}
