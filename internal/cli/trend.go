package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/trend"
)

type trendOptions struct {
	Spec   string // a spec's name, or a spec file whose name it is
	Scorer string
	Weeks  int
	Window string
	Since  string
	Level  float64
	MinN   int
	Format string
	Output string
}

func (o *trendOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Spec, "spec", "", "only the score-traces runs of this spec: its name, or its file (default: every spec's)")
	f.StringVar(&o.Scorer, "scorer", "", "the scorer whose verdicts count (default: each run's primary scorer)")
	f.IntVar(&o.Weeks, "weeks", 8, "show the newest N windows, ending at the newest scored trace's (0: every window; with --since and no --weeks, every window since)")
	f.StringVar(&o.Window, "window", "7d", "window length: 7d is the ISO week (UTC, from Monday); any number of days (14d, 2w, or 30) on the same Monday-aligned grid")
	f.StringVar(&o.Since, "since", "", "leave out traces before this time: RFC 3339, a UTC date (2026-11-02), or an age (30d, 8w)")
	f.Float64Var(&o.Level, "level", 0.95, "confidence level of every interval; 1 − level is the family-wise false-alarm rate of the drop flags")
	f.IntVar(&o.MinN, "min-n", trend.DefaultMinN, "the fewest scored traces a window needs to be tested, or tested against")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Trend.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the report to FILE, whole or not at all")
}

func newTrendCommand(g *Globals) *cobra.Command {
	o := &trendOptions{}
	cmd := &cobra.Command{
		Use:   "trend [--spec NAME] [--scorer NAME] [--weeks N]",
		Short: "Weekly pass rates of scored traces per model, with drops flagged",
		Long: `Show how production traffic scored, week by week: for each model, the pass
rate of the traces assay score-traces scored in each ISO week (UTC, Monday to
Sunday; --window for other lengths), weighted by the sample's selection
probabilities, with its interval, and flag a week whose rate dropped. It reads
the store only and calls no model.

The rates. Every complete score-traces run in the store is read (--spec: only
one spec's), with its latest complete scoring; a trace is a sampled trace
with its model, time, stratum and weight (the inverse of its selection
probability), and its verdict is the run's primary scorer's (--scorer: that
scorer's). A trace scored by several runs counts once, with the newest run's
verdict. A window's rate is the weighted (Hájek) mean of its traces'
verdicts; its standard error is the stratified, linearised one (each
sample's strata apart) without the finite population correction — the
question is whether the model changed, and a week's calls are themselves a
draw of its behaviour — and its interval is Wilson's on the effective sample
size.

The drop flag. Each window with at least --min-n traces of a model is
compared with the latest earlier window shown that also had --min-n: the
change d = rate − baseline rate, with its interval (d ± z·SE, SE from both
windows' standard errors, two independent samples), and a one-sided
two-sample test of "no drop": z = d / SE0, p = Φ(z), where SE0 is the
standard error under no change (each stratum's rate pooled over both
windows: the score test, which holds its level where the Wald z on each
window's own SE does not). The p-values of every model × window tested are
Holm-adjusted together; a drop is flagged (▼) when the adjusted p is at or
below 1 − --level. Simulated on stable traffic, the flags' family-wise
false-alarm rate was 3.5% at a nominal 5%. The fewer windows shown, the
smaller the family: --weeks 2 tests the last week against the one before.

Windows compared whose verdicts came from different scorer definitions are
marked: such a change may be the scorers', not the model's.

docs/trend.md explains every number and how to run it from cron.

Exit codes: 0 no drop flagged, 3 a drop flagged (a failed verdict, as a
gate's), 1 error (no store, no score-traces run), 2 usage error (an unknown
--scorer names the scorers there are).

` + exitCodesHelp,
		Example: `  assay trend
  assay trend --spec support --weeks 2          # the last week against the one before (cron)
  assay trend --scorer format --since 2026-09-01 --format html -o trend.html`,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Trend.Names()); err != nil {
				return err
			}
			if !(o.Level > 0 && o.Level < 1) {
				return usageError{fmt.Errorf("--level %g: must be strictly between 0 and 1 (0.95 for 95%% intervals)", o.Level)}
			}
			if o.Weeks < 0 {
				return usageError{fmt.Errorf("--weeks %d: give 0 (every window) or more", o.Weeks)}
			}
			if o.MinN < 2 {
				return usageError{fmt.Errorf("--min-n %d: a window needs at least 2 traces to be tested", o.MinN)}
			}
			if o.Since != "" && !cmd.Flags().Changed("weeks") {
				o.Weeks = 0
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTrend(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// parseTrendWindow reads --window: a number of days, "Nd" or "Nw".
func parseTrendWindow(s string) (int, error) {
	bad := fmt.Errorf("--window %q: want a number of days: 7d (the ISO week), 14d, 2w or 30", s)
	n, unit := s, 1
	switch {
	case strings.HasSuffix(s, "d"):
		n = s[:len(s)-1]
	case strings.HasSuffix(s, "w"):
		n, unit = s[:len(s)-1], 7
	}
	days, err := strconv.Atoi(n)
	if err != nil || days < 1 || days > 366 {
		return 0, bad
	}
	return days * unit, nil
}

// parseTrendSince reads --since: RFC 3339, a UTC date, or an age before
// now ("30d", "8w").
func parseTrendSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if len(s) > 1 && (s[len(s)-1] == 'd' || s[len(s)-1] == 'w') {
		if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && n >= 0 {
			if s[len(s)-1] == 'w' {
				n *= 7
			}
			return now.UTC().AddDate(0, 0, -n), nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want RFC 3339 (2026-11-02T00:00:00Z), a UTC date (2026-11-02) or an age (30d, 8w)", s)
}

// trendSpecName is --spec's spec name: a spec file's name when the value
// names a file, the value itself otherwise.
func trendSpecName(g *Globals, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if fi, err := os.Stat(s); err == nil && !fi.IsDir() {
		return specName(g, s)
	}
	return s, nil
}

func runTrend(ctx context.Context, g *Globals, o *trendOptions) error {
	days, err := parseTrendWindow(o.Window)
	if err != nil {
		return usageError{err}
	}
	since, err := parseTrendSince(o.Since, g.Now())
	if err != nil {
		return usageError{err}
	}
	name, err := trendSpecName(g, o.Spec)
	if err != nil {
		return fmt.Errorf("trend: --spec: %w", err)
	}
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("trend: %w", err)
	}
	defer st.Close()
	rep, err := trend.Build(ctx, st, trend.Source{Spec: name, Scorer: o.Scorer},
		trend.Options{Level: o.Level, Window: days, Weeks: o.Weeks, Since: since, MinN: o.MinN})
	var us *trend.UnknownScorerError
	switch {
	case errors.As(err, &us):
		return usageError{fmt.Errorf("trend: --scorer: %w", err)}
	case errors.Is(err, trend.ErrNoTraces):
		of := ""
		if name != "" {
			of = " of spec " + strconv.Quote(name)
		}
		return fmt.Errorf("trend: no score-traces run%s in the store %s: score a sample first (assay sample, then assay score-traces SPEC --sample ID)", of, storeName(g.DB))
	case err != nil:
		return fmt.Errorf("trend: %w", err)
	}
	r, err := report.NewRegistry().Trend.Reporter(o.Format, rep)
	if err != nil {
		return usageError{err}
	}
	if err := printOut(g.Stdout, o.Output, r); err != nil {
		return err
	}
	if rep.Drops > 0 {
		var where []string
		for _, s := range rep.Models {
			for _, p := range s.Points {
				if p.Change != nil && p.Change.Drop {
					where = append(where, strconv.Quote(s.Model)+" in "+p.Window)
				}
			}
		}
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("trend: %s flagged: %s", dropsWord(rep.Drops), strings.Join(where, ", "))}
	}
	return nil
}

func dropsWord(n int) string {
	if n == 1 {
		return "a drop was"
	}
	return strconv.Itoa(n) + " drops were"
}
