// Command assay evaluates language models on your own workload.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/assay-eval/assay/internal/cli"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	os.Exit(cli.Execute(context.Background(), os.Args[1:], &cli.Globals{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		Interrupts:       sigs,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}))
}
