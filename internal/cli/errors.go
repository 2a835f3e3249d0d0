package cli

// UsageError marks an error in how a command was called; main prints it with a hint to --help
// and exits with status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

func usageError(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{Err: err}
}
