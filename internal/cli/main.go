package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// Main is the assay command as a process runs it: the process's arguments,
// standard streams and environment, SIGINT and SIGTERM delivered as the
// interrupts Execute watches (the first stops a run, the second cancels
// it), and the exit code to leave with. cmd/assay's main is this; so is
// this package's test binary when a test runs it as assay (binary_test.go),
// so the tests that kill or script the command run the same code a user's
// binary does without linking a second one.
func Main() int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	return Execute(context.Background(), os.Args[1:], &Globals{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		Interrupts:       sigs,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	})
}
