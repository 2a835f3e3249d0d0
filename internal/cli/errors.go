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

// hintedError replaces an error's message with one that says what to do about it; errors.Is
// and errors.As still see the error.
type hintedError struct {
	msg string
	err error
}

func (e hintedError) Error() string { return e.msg }
func (e hintedError) Unwrap() error { return e.err }
