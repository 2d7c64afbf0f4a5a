package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/selftest"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
)

// Where judge scorers are sent (--judge-via).
const (
	judgeViaSkip   = engine.JudgeViaSkip
	judgeViaMock   = engine.JudgeViaMock
	judgeViaTarget = engine.JudgeViaTarget
)

type selftestOptions struct {
	// Files are overlays merged over the spec (-f).
	Files    []string
	Spec     string
	Format   string
	Limit    int
	Examples int
	Seed     int64
	JudgeVia string
	NoCache  bool
	limitSet bool // --limit was given
}

// targetJudgeCases is how many cases --judge-via target attacks when
// --limit is not given.
const targetJudgeCases = 50

func (o *selftestOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Selftest.Names(), "|"))
	f.IntVar(&o.Limit, "limit", 0, "attack only the first N cases (default: every case a run uses)")
	f.IntVar(&o.Examples, "examples", 3, "example cases shown for each null model that passes clearly above chance")
	f.Int64Var(&o.Seed, "seed", 1, "seed of the shuffled null model's permutation")
	f.StringVar(&o.JudgeVia, "judge-via", judgeViaSkip, "judge scorers: skip (no calls), mock (an in-process grader that passes everything) or target (the spec's configured judge; real calls)")
	f.BoolVar(&o.NoCache, "no-cache", false, "with --judge-via target: bypass the response cache (the null outputs' verdicts are neither read from it nor stored)")
}

func newSelftestCommand(g *Globals) *cobra.Command {
	o := &selftestOptions{}
	cmd := &cobra.Command{
		Use:   "selftest SPEC",
		Short: "Attack the spec's parser and scorers with null models; exit 3 when they can be gamed",
		Long: `Attack the spec's own output parser and scorers with null models — outputs
that know nothing of the answer: empty, whitespace, {}, [], null, the prompt
echoed, the case's input echoed, a refusal, the most common expected value,
another case's expected value, 1 MiB of prose, text aimed at a judge, every
label at once, the numbers 0 to 1000. No candidate model is called.

Each null model runs twice: raw (through the parser, then the scorers, as in a
run) and parsed (its value handed to the scorers as the parsed output, so a
scorer that accepts anything is caught even when the parser rejects junk).
Each pass rate gets a Wilson interval (simultaneous 95% over the scorer's
cells) and is compared with its chance rate: what a correct grader would pass
(0 for junk; for the constant and shuffled answers, the share of cases whose
expected value they happen to equal). A null model is clearly above chance
when the interval's lower end exceeds chance + 2 points. The headline score
(the primary scorer, or several combined) passing one makes the spec
exploitable; other scorers get warnings or notes.

Judge scorers are skipped by default, so a selftest costs nothing:
--judge-via mock grades with an in-process mock that passes everything (shows
which null models reach the grader past the fail-closed gates), --judge-via
target calls the spec's configured judge (real calls, through the response
cache at --db; the first 50 cases unless --limit is given, and without the
1 MiB null model).

Exit codes: 0 sound (or nothing found with the headline's judge skipped),
3 exploitable, 4 invalid spec, 1 error, 130 interrupted.`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Selftest.Names()); err != nil {
				return err
			}
			if o.Limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d)", o.Limit)}
			}
			if o.Examples < 0 {
				return usageError{fmt.Errorf("--examples must not be negative (got %d)", o.Examples)}
			}
			switch o.JudgeVia {
			case judgeViaSkip, judgeViaMock, judgeViaTarget:
			default:
				return usageError{fmt.Errorf("--judge-via %q: use skip, mock or target", o.JudgeVia)}
			}
			if o.NoCache && o.JudgeVia != judgeViaTarget {
				return usageError{errors.New("--no-cache applies only with --judge-via target")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			o.limitSet = cmd.Flags().Changed("limit")
			return runSelftest(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runSelftest(ctx context.Context, g *Globals, o *selftestOptions) error {
	start := g.Now()
	t, err := task.LoadWith(o.Spec, specOptions(g, o.Files))
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-g.Interrupts:
			close(interrupted)
			cancel()
		case <-ctx.Done():
		}
	}()

	var closers engine.Closers
	defer closers.Close()
	jp, err := selftestJudges(ctx, g, t, o, &closers)
	if err != nil {
		return err
	}

	opts := selftest.Options{
		Limit:         o.Limit,
		Examples:      o.Examples,
		Seed:          o.Seed,
		JudgeProvider: jp,
		JudgeVia:      o.JudgeVia,
	}
	if jp != nil && o.JudgeVia == judgeViaTarget {
		// Every null output that passes the fail-closed gates is a paid
		// call: bound the cases unless told, and send no megabyte prompts.
		if !o.limitSet {
			opts.Limit = targetJudgeCases
		}
		opts.Skip = map[string]string{selftest.NullLong: "not sent to a paid grader (1 MiB is about 250,000 tokens a call); run --judge-via skip or mock to attack the other scorers with it"}
	}
	rep, err := selftest.Run(ctx, t, opts)
	if err != nil {
		select {
		case <-interrupted:
			return ErrInterrupted
		default:
		}
		return err
	}
	rep.ElapsedMS = float64(g.Now().Sub(start)) / float64(time.Millisecond)
	if jp != nil && o.JudgeVia == judgeViaTarget && !o.limitSet {
		rep.Notes = append(rep.Notes, fmt.Sprintf("--judge-via target attacked only the first %d cases (each null output that reaches the grader is a paid call); set --limit to change it", targetJudgeCases))
	}

	r, err := report.NewRegistry().Selftest.Reporter(o.Format, rep)
	if err != nil {
		return err
	}
	if err := printOut(g.Stdout, "", r); err != nil {
		return err
	}
	if rep.Verdict == selftest.VerdictExploitable {
		return &ExitError{Code: ExitFailed, Err: errSilent}
	}
	return nil
}

// selftestJudges returns how judge scorers reach a grader
// (engine.SelftestJudges): nil (skipped), an in-process mock that passes
// everything, or the configured judge targets through the response cache
// at --db unless --no-cache (each checked now, so a missing key fails
// before any work).
func selftestJudges(ctx context.Context, g *Globals, t *task.Task, o *selftestOptions, closers *engine.Closers) (engine.JudgeLookup, error) {
	var st store.Store
	if o.JudgeVia == judgeViaTarget && !o.NoCache && len(t.Scorers.JudgeTargets()) > 0 {
		s, err := openStore(ctx, g)
		if err != nil {
			return nil, err
		}
		st = s
		*closers = append(*closers, s)
	}
	return newEngine(g, st).SelftestJudges(t, o.JudgeVia, o.NoCache, closers)
}
