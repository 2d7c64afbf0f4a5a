package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/store"
)

type sampleOptions struct {
	Window string
	Since  string
	Until  string
	By     []string
	Per    string
	Size   int
	Seed   uint64
	Name   string
	Model  string
	Where  []string
	Format string
	Output string
}

func (o *sampleOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Window, "window", "", "the traces of this long a window: 7d, 36h, 90m, 2w (whole units up to now; see --help)")
	f.StringVar(&o.Since, "since", "", "traces at or after this time (RFC 3339, or a UTC date 2026-11-30)")
	f.StringVar(&o.Until, "until", "", "traces before this time (RFC 3339, or a UTC date)")
	f.StringSliceVar(&o.By, "by", nil, "strata keys: model, provider, operation, source or any attribute name (comma-separated)")
	f.StringVar(&o.Per, "per", "", "traces drawn per stratum: N with --by, or KEY=N (--per model=50 is --by model --per 50)")
	f.IntVar(&o.Size, "size", 0, "draw a simple sample of N traces (no strata)")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the draw (default: a random one, recorded and printed)")
	f.StringVar(&o.Name, "name", "", "the sample's ID (default: s- and the time it was drawn)")
	f.StringVar(&o.Model, "model", "", "only the traces of this model")
	f.StringArrayVar(&o.Where, "where", nil, "only the traces whose KEY (as --by reads it) equals VALUE: --where route=/chat (repeatable)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Sample.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the sample's description to FILE, whole or not at all")
}

func newSampleCommand(g *Globals) *cobra.Command {
	o := &sampleOptions{}
	cmd := &cobra.Command{
		Use:   "sample --window 7d (--per model=50 | --by KEYS --per N | --size N)",
		Short: "Draw a recorded, reproducible sample of stored traces",
		Long: `Draw a sample of the traces in the store (assay collect, assay ingest) and
record it, so assay score-traces can score it and its rates stand for the
whole population: every drawn trace carries its selection probability.

The population is the traces of a time window, [since, until):
  --window 7d        the 7 whole UTC days before today (until today 00:00 UTC);
                     h counts whole hours up to the current hour, m whole
                     minutes, w weeks of 7 days (until today 00:00 UTC)
  --since/--until    the window's bounds (RFC 3339 or a UTC date); with
                     --window, the other bound is the window's length away
--model M and --where KEY=VALUE narrow it further.

Stratified (--by KEYS --per N, or --per KEY=N): the population is split by
the traces' values of the keys (model, provider, operation, source, or any
attribute of the span, then of its resource; "(none)" when a trace has
none), and N traces are drawn from each stratum, or all of a smaller one.
Simple (--size N): N traces drawn from the whole population. A drawn trace
weighs its stratum's population over its draws (N_h/n_h).

The draw keeps, in each stratum, the traces with the smallest hash of their
ID under the seed: every set of N traces is equally likely, the same seed
and traces give the same sample whatever order they were stored in, and
memory holds N IDs per stratum whatever the population's size. The seed is
recorded and printed. docs/sampling.md explains the estimate.

` + exitCodesHelp,
		Example: `  assay sample --window 7d --per model=50 --seed 1
  assay sample --since 2026-11-23 --until 2026-11-30 --by model,route --per 30 --name week48
  assay sample --window 24h --size 200 --model gpt-4o --format json`,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return checkFormat(o.Format, report.NewRegistry().Sample.Names())
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSample(cmd.Context(), g, o, cmd.Flags().Changed("seed"))
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// sampleDrawOptions turns the flags into the draw's options, every problem
// at once.
func sampleDrawOptions(o *sampleOptions, now time.Time, seedGiven bool) (sample.Options, error) {
	var errs []error
	d := sample.Options{By: o.By, Size: o.Size, Seed: o.Seed, ID: o.Name, Created: now.UTC()}
	if o.Per != "" {
		key, n, ok := strings.Cut(o.Per, "=")
		if !ok {
			n, key = key, ""
		}
		per, err := strconv.Atoi(n)
		switch {
		case err != nil || per < 1:
			errs = append(errs, fmt.Errorf("--per %q: want a count of 1 or more (--per 50 with --by, or --per model=50)", o.Per))
		case key != "" && len(o.By) > 0:
			errs = append(errs, fmt.Errorf("--per %s names its key; give --by or --per KEY=N, not both", o.Per))
		case key != "":
			d.By = []string{key}
		}
		d.Per = per
	}
	since, err := parseSampleTime("--since", o.Since)
	errs = append(errs, err)
	until, err := parseSampleTime("--until", o.Until)
	errs = append(errs, err)
	if o.Window != "" {
		length, unit, err := parseWindow(o.Window)
		switch {
		case err != nil:
			errs = append(errs, err)
		case o.Since != "" && o.Until != "":
			errs = append(errs, errors.New("--window with both --since and --until: give two of the three"))
		case o.Since != "":
			until = since.Add(length)
		case o.Until != "":
			since = until.Add(-length)
		default:
			until = now.UTC().Truncate(unit)
			since = until.Add(-length)
		}
	}
	d.Since, d.Until = since, until
	if o.Model != "" {
		d.Filter = append(d.Filter, "model="+o.Model)
	}
	d.Filter = append(d.Filter, o.Where...)
	if !seedGiven {
		var b [8]byte
		_, _ = rand.Read(b[:])
		d.Seed = binary.BigEndian.Uint64(b[:]) >> 11 // a seed short enough to type back
	}
	if d.ID == "" {
		d.ID = "s-" + record.NewRunID(now)
	}
	if err := errors.Join(errs...); err != nil {
		return d, err
	}
	return d, d.Check()
}

// parseSampleTime reads RFC 3339 or a UTC date; "" is no bound.
func parseSampleTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2026-11-30T12:00:00Z) or a UTC date (2026-11-30)", flag, s)
}

// parseWindow reads "7d", "36h", "90m", "2w": the window's length and the
// unit its end is aligned to (a day for d and w).
func parseWindow(s string) (time.Duration, time.Duration, error) {
	bad := fmt.Errorf("--window %q: want a whole number and a unit: 7d, 36h, 90m or 2w", s)
	if len(s) < 2 {
		return 0, 0, bad
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 1 {
		return 0, 0, bad
	}
	day := 24 * time.Hour
	switch s[len(s)-1] {
	case 'm':
		return time.Duration(n) * time.Minute, time.Minute, nil
	case 'h':
		return time.Duration(n) * time.Hour, time.Hour, nil
	case 'd':
		return time.Duration(n) * day, day, nil
	case 'w':
		return time.Duration(n) * 7 * day, day, nil
	}
	return 0, 0, bad
}

func runSample(ctx context.Context, g *Globals, o *sampleOptions, seedGiven bool) error {
	d, err := sampleDrawOptions(o, g.Now(), seedGiven)
	if err != nil {
		return usageError{err}
	}
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	defer st.Close()
	if err := refuseReadOnly(st, g, "sample", "nothing was drawn"); err != nil {
		return err
	}
	f := store.TraceFilter{Since: d.Since, Until: d.Until, Model: o.Model}
	smp, err := sample.Draw(func(fn func(*record.Trace) error) error { return st.Traces(ctx, f, fn) }, d)
	if err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	if len(smp.Items) == 0 {
		return fmt.Errorf("sample: no stored trace in the window %s matches: nothing to draw (assay collect or assay ingest store traces)", windowWords(d))
	}
	switch err := st.PutSample(ctx, smp); {
	case errors.Is(err, store.ErrSampleExists):
		return usageError{fmt.Errorf("sample: a sample named %s already exists: choose another --name", smp.ID)}
	case err != nil:
		return fmt.Errorf("sample: %w", err)
	}
	r, err := report.NewRegistry().Sample.Reporter(o.Format, smp)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, o.Output, r)
}

func windowWords(d sample.Options) string {
	f := func(t time.Time, open string) string {
		if t.IsZero() {
			return open
		}
		return t.Format(time.RFC3339)
	}
	w := "[" + f(d.Since, "the first trace") + ", " + f(d.Until, "now") + ")"
	if len(d.Filter) > 0 {
		w += " where " + strings.Join(d.Filter, ", ")
	}
	return w
}
