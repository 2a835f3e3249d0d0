package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// durableBytes is what the hub stores of the bench Propagation's per-cluster work: the JSON
// bytes of its Delivery records (one per cluster) and its revisions (ControllerRevisions), as
// the API server serves them. It waits, within a deadline, for the revision that is stored
// aside after the delivery.
func (b *bench) durableBytes(ctx context.Context) (records, revisions int, err error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if records, err = listBytes(ctx, b.hub, "flotilla.dev/v1alpha1", "DeliveryList"); err != nil {
			return 0, 0, err
		}
		if revisions, err = listBytes(ctx, b.hub, "apps/v1", "ControllerRevisionList"); err != nil {
			return 0, 0, err
		}
		if revisions > 0 || time.Now().After(deadline) {
			return records, revisions, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// listBytes sums the JSON sizes of the objects of a list kind in the bench namespace.
func listBytes(ctx context.Context, c client.Client, apiVersion, listKind string) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(apiVersion)
	list.SetKind(listKind)
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, fmt.Errorf("list %s: %w", listKind, err)
	}
	total := 0
	for i := range list.Items {
		data, err := json.Marshal(list.Items[i].Object)
		if err != nil {
			return 0, err
		}
		total += len(data)
	}
	return total, nil
}
