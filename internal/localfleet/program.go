package localfleet

import "time"

// Program is a program started beside a fleet the way its planes' binaries are (a
// `flotilla agent` next to a spoke, for instance): it logs to <dir>/<name>.log, records its PID
// in <dir>/<name>.pid, runs in its own process group and gets SIGKILL if the process that
// started it dies, so it never outlives a killed test, benchmark or `flotilla dev up`.
type Program struct {
	proc *process
}

// StartProgram starts bin with args in dir. Stop it with Stop.
func StartProgram(dir, name, bin string, args ...string) (*Program, error) {
	p, err := startProcess(dir, name, bin, args)
	if err != nil {
		return nil, err
	}
	return &Program{proc: p}, nil
}

// PID is the program's process ID.
func (p *Program) PID() int { return p.proc.PID() }

// LogPath is the file the program's output goes to.
func (p *Program) LogPath() string { return p.proc.logPath }

// Stop ends the program by its PID (SIGTERM, then SIGKILL once grace has passed) and returns
// once it has exited; stopping it again does nothing.
func (p *Program) Stop(grace time.Duration) { p.proc.stop(grace) }

// Done is closed once the program has exited.
func (p *Program) Done() <-chan struct{} { return p.proc.done }

// ExitError describes how the program ended, with the last lines of its log.
func (p *Program) ExitError() error { return p.proc.exitError() }
