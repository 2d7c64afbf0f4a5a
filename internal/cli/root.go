// Package cli owns the assay command line: one file per command, each with an
// options struct, flag checks before any work, and a plain function that tests
// call directly. Process state (stdio, environment, clock, interrupts) comes in
// through Globals; nothing here is package-level mutable state. Exit codes are
// API and are mapped in exactly one place (ExitCode).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// Exit codes. They are documented in `assay --help` and are part of the API.
const (
	ExitOK          = 0
	ExitErr         = 1
	ExitUsage       = 2
	ExitFailed      = 3 // gate found a regression; selftest found the grader exploitable
	ExitInvalid     = 4 // invalid spec or dataset
	ExitUnhealthy   = 5 // run: a target's provider errors above run.max_error_rate, or a target given up
	ExitInterrupted = 130
)

const exitCodesHelp = `Exit codes:
  0    ok
  1    error
  2    usage error (bad flags or arguments)
  3    a failed verdict: gate found a regression, selftest an exploitable grader,
       drift a changed model, probe a likely contaminated target, trend a
       drop in a model's pass rate
  4    invalid spec or dataset
  5    unhealthy run: a target's provider errors exceeded run.max_error_rate
       (default 20%), or it was given up as unavailable after 5 consecutive
       auth failures (401/403), unknown hosts or refused connections
       (results are kept; resume with --resume)
  130  interrupted (results so far are kept; resume with --resume)`

// Globals is the process state every command works with.
type Globals struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv looks up an environment variable.
	Getenv func(string) string
	Now    func() time.Time
	// Interrupts delivers Ctrl-C (SIGINT/SIGTERM); nil means never.
	Interrupts <-chan os.Signal
	// StderrIsTerminal decides whether progress is drawn.
	StderrIsTerminal bool

	// DB is the store path from --db (ASSAY_DB, default ./.assay/assay.db).
	DB string

	// Providers are the providers a target may name (nil: assay's own,
	// provider/builtin); spec checks and builds targets through it.
	Providers *registry.Registry
}

// ExitError carries an exit code with an error.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// ErrInterrupted is returned when a run was interrupted; its results are kept.
var ErrInterrupted = errors.New("interrupted")

type usageError struct{ error }

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ps spec.Problems
	if errors.As(err, &ps) {
		return ExitInvalid
	}
	if errors.Is(err, ErrInterrupted) {
		return ExitInterrupted
	}
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitErr
}

// Execute runs the command line and returns the exit code.
func Execute(ctx context.Context, args []string, g *Globals) int {
	if g.Now == nil {
		g.Now = time.Now
	}
	if g.Getenv == nil {
		g.Getenv = func(string) string { return "" }
	}
	root := newRootCommand(g)
	root.SetArgs(args)
	root.SetIn(g.Stdin)
	root.SetOut(g.Stdout)
	root.SetErr(g.Stderr)
	err := root.ExecuteContext(ctx)
	code := ExitCode(err)
	if err != nil && !errors.Is(err, errSilent) {
		var ps spec.Problems
		switch {
		case errors.As(err, &ps):
			for _, p := range ps {
				fmt.Fprintln(g.Stderr, p.String())
			}
			fmt.Fprintf(g.Stderr, "assay: %d problem(s); nothing was run\n", len(ps))
		case errors.Is(err, ErrInterrupted):
			fmt.Fprintln(g.Stderr, "assay: "+err.Error())
		default:
			fmt.Fprintln(g.Stderr, "assay: "+err.Error())
		}
	}
	return code
}

// errSilent marks an error already reported to the user.
var errSilent = errors.New("already reported")

func newRootCommand(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "assay",
		Short: "Evaluate language models on your own workload",
		Long: `assay runs candidate models on your own cases, under your own prompt, parameters
and parser, scores them by your own definition of correct, and reports what a
reviewer or a CI pipeline can act on.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.DB == "" {
				g.DB = g.Getenv("ASSAY_DB")
			}
			if g.DB == "" {
				g.DB = filepath.Join(".assay", "assay.db")
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&g.DB, "db", "", "the store: an SQLite file, or a PostgreSQL URL postgres://USER@HOST/DB shared by a team (env ASSAY_DB; default ./.assay/assay.db)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nrun '%s --help' for usage", err, cmd.CommandPath())}
	})
	root.AddCommand(
		newValidateCommand(g),
		newRunCommand(g),
		newReportCommand(g),
		newMockCommand(g),
		newRescoreCommand(g),
		newCompareCommand(g),
		newPlanCommand(g),
		newGateCommand(g),
		newBaselineCommand(g),
		newDiffCommand(g),
		newDriftCommand(g),
		newSelftestCommand(g),
		newProbeCommand(g),
		newInitCommand(g),
		newRunsCommand(g),
		newExportCommand(g),
		newCacheCommand(g),
		newServeCommand(g),
		newLabelsCommand(g),
		newCalibrateCommand(g),
		newCollectCommand(g),
		newIngestCommand(g),
		newSampleCommand(g),
		newScoreTracesCommand(g),
		newTrendCommand(g),
		newPromoteCommand(g),
		newImportCommand(g),
		newDifficultyCommand(g),
		newMismatchCommand(g),
		newLoadCommand(g),
		newWorkerCommand(g),
		newStoreCommand(g),
	)
	// Every command with --json also takes --format text|json (jsonformat.go).
	addJSONFormats(root)
	// After every command is added: shell completion of runs, targets and
	// formats (completion.go); `assay completion SHELL` is cobra's.
	registerCompletions(root, g)
	return root
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return argsError(cmd, args, err)
		}
		return nil
	}
}

func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(lo, hi)(cmd, args); err != nil {
			return argsError(cmd, args, err)
		}
		return nil
	}
}

// argsError is a usage error for the wrong number of arguments that shows
// the command's usage line and, when a spec file was given as an argument
// to a command that takes it as --spec, says so.
func argsError(cmd *cobra.Command, args []string, err error) error {
	msg := fmt.Sprintf("%v (usage: %s)", err, cmd.UseLine())
	if cmd.Flags().Lookup("spec") != nil {
		for _, a := range args {
			if ext := strings.ToLower(filepath.Ext(a)); ext == ".yaml" || ext == ".yml" {
				msg += fmt.Sprintf("; give a spec with --spec %s", a)
				break
			}
		}
	}
	return usageError{errors.New(msg)}
}

// runArg is the optional RUN argument of a command: the newest run when absent.
func runArg(args []string) string {
	if len(args) == 0 {
		return "latest"
	}
	return args[0]
}
