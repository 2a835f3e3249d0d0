// Package coalesce runs work aside from the reconciles that ask for it: the latest value
// queued for a key is handled by a small pool of workers, a value queued while its key is
// being handled is handled once more afterwards, and a failure is retried with backoff unless
// a newer value replaced it.
//
// Reconciles use it for hub writes that are large and need not be done before the reconcile
// ends (a Delivery record's status, a revision of a thousand objects): done inline, they would
// hold up the next reconcile of the same owner, that is the delivery of the user's next edit.
package coalesce
