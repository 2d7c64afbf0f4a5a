package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/httpguard"
	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/load/harness"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
	"github.com/assay-eval/assay/internal/units"
)

// Defaults and bounds of assay load.
const (
	defaultLoadCases       = 200
	defaultLoadMaxRequests = 10_000
	defaultLoadMaxSpend    = 5.0
	maxLoadLevels          = 50
	// maxLoadConcurrency bounds a closed loop's level and the requests a
	// target's provider lets in flight at once.
	maxLoadConcurrency = spec.MaxConcurrency
)

type loadOptions struct {
	Spec        string
	Files       []string
	Targets     []string
	Rate        string
	Concurrency string
	Duration    time.Duration
	Warmup      time.Duration
	Cases       int
	Seed        uint64
	Arrivals    string
	SLO         string
	MaxRequests int
	MaxSpend    float64
	Own         bool
	Format      string
	Output      string

	mode   string
	levels []float64
}

func (o *loadOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVarP(&o.Files, "file", "f", nil, "merge this overlay file over the spec (repeatable; later files win)")
	f.StringSliceVar(&o.Targets, "targets", nil, "load only these targets (comma-separated; default: the spec's candidates)")
	f.StringVar(&o.Rate, "rate", "", "open loop: the requests per second of each step, in order (e.g. 1,2,5,10,20)")
	f.StringVar(&o.Concurrency, "concurrency", "", "closed loop: the requests in flight of each step, in order (e.g. 1,4,16,64)")
	f.DurationVar(&o.Duration, "duration", 60*time.Second, "each step's measured window")
	f.DurationVar(&o.Warmup, "warmup", 0, "run each step this long before measuring it (not recorded)")
	f.IntVar(&o.Cases, "cases", defaultLoadCases, "sample this many of the dataset's cases (seeded) and send their rendered prompts in turn")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the case sample, the arrivals and the bootstrap")
	f.StringVar(&o.Arrivals, "arrivals", load.ArrivalsPoisson, "open loop arrivals: poisson (random, as real traffic) or uniform (evenly spaced)")
	f.StringVar(&o.SLO, "slo", "", "the service level a knee must meet, e.g. p95=2s,ttft95=500ms,errors=1% (default: the spec's load.slo)")
	f.IntVar(&o.MaxRequests, "max-requests", defaultLoadMaxRequests, "stop before the whole test would make more requests than this (warm-ups included)")
	f.Float64Var(&o.MaxSpend, "max-spend", defaultLoadMaxSpend, "stop before the whole test would spend more than this many USD (at the targets' price:)")
	f.BoolVar(&o.Own, "i-own-this-endpoint", false, "allow targets whose base URL is not loopback (or list them under the spec's load.allow)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Load.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the report to FILE, whole or not at all")
}

func newLoadCommand(g *Globals) *cobra.Command {
	o := &loadOptions{}
	cmd := &cobra.Command{
		Use:   "load SPEC (--rate LIST | --concurrency LIST)",
		Short: "Find each target's knee: throughput against p95 latency, time to first token and errors",
		Long: `Load each target with the spec's own prompts, step by step, and find its
knee: the highest load at which it still meets a service level.

--rate 1,2,5,10 runs an open loop: requests start at that many per second
(Poisson arrivals by default, --arrivals uniform for even spacing) whether or
not earlier ones have answered, so queueing shows as latency. --concurrency
1,4,16 runs a closed loop: that many requests in flight, each new one sent
when one answers. Each step runs --duration (after an unrecorded --warmup),
for each target in turn, in the order given.

The prompts are the spec's rendered prompts of --cases cases sampled from the
dataset with --seed, sent in turn. Targets are built as assay run builds
them but without retries (a 429 under load is a finding), without the
response cache, and without the targets' limits: (the load is what you ask
for).

Per step it measures the achieved requests/s and output tokens/s, latency
p50/p95/p99 and time to first token p50/p95 with bootstrap intervals over
requests, inter-token latency of streamed targets, errors by kind (429,
5xx, time-out) with Wilson intervals, the cost per 1,000 requests, and the
harness's own CPU and lateness: a step where assay itself was the bottleneck
is flagged client_saturated and never counts as a knee.

The knee of a target is the highest step whose intervals' upper bounds meet
the SLO (--slo p95=2s,ttft95=500ms,errors=1%, or the spec's load.slo), with
its cost per month at the spec's volume. A target's steps stop early once
it is clearly past its knee (errors at least 50% or 5× the SLO's, or the
p95's lower bound above 3× the SLO's); the rest are recorded as skipped.

Safety: a target whose base URL is not loopback (127.0.0.1, ::1,
localhost) needs --i-own-this-endpoint or its URL under the spec's
load.allow. --max-requests (default 10,000) and --max-spend (USD, default
5) cap the whole test: it stops before exceeding either and says so.
Ctrl-C stops at once: requests in flight are cancelled and what was measured
is stored as an interrupted run.

The load test is stored like a run (assay runs lists it as kind load;
assay report RUN renders it again; assay gate BASE CANDIDATE holds two load
runs to the spec's load.gate rules). docs/load.md explains every number.

Exit codes: 0 done, 2 usage (a non-loopback endpoint without permission is
one), 4 invalid spec or dataset, 1 error, 130 interrupted.`,
		Example: `  assay mock --capacity 8 --latency 50ms &
  assay load assay.yaml --rate 40,80,120,160,200,240 --duration 20s --slo p95=300ms,errors=1%
  assay load assay.yaml --concurrency 1,4,16,64 --targets local-vllm --format html -o load.html
  assay load assay.yaml --rate 1,2,5 --i-own-this-endpoint --max-spend 2`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return o.check()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runLoad(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// check checks the flags that need no spec.
func (o *loadOptions) check() error {
	if err := checkFormat(o.Format, report.NewRegistry().Load.Names()); err != nil {
		return err
	}
	switch {
	case o.Rate == "" && o.Concurrency == "":
		return usageError{errors.New("give the steps: --rate 1,2,5,10 (requests per second, open loop) or --concurrency 1,4,16 (requests in flight, closed loop)")}
	case o.Rate != "" && o.Concurrency != "":
		return usageError{errors.New("--rate and --concurrency are two kinds of test: give one")}
	case o.Rate != "":
		o.mode = load.ModeRate
		levels, err := parseLevels("--rate", o.Rate, false)
		if err != nil {
			return err
		}
		o.levels = levels
	default:
		o.mode = load.ModeConcurrency
		levels, err := parseLevels("--concurrency", o.Concurrency, true)
		if err != nil {
			return err
		}
		o.levels = levels
	}
	if o.Duration <= 0 {
		return usageError{fmt.Errorf("--duration %s: give a positive duration such as 60s", o.Duration)}
	}
	if o.Warmup < 0 {
		return usageError{fmt.Errorf("--warmup %s: must not be negative", o.Warmup)}
	}
	if o.Cases < 1 {
		return usageError{fmt.Errorf("--cases %d: sample at least 1 case", o.Cases)}
	}
	if o.Arrivals != load.ArrivalsPoisson && o.Arrivals != load.ArrivalsUniform {
		return usageError{fmt.Errorf("--arrivals %q: give poisson or uniform", o.Arrivals)}
	}
	if o.MaxRequests < 1 {
		return usageError{fmt.Errorf("--max-requests %d: give at least 1", o.MaxRequests)}
	}
	if !(o.MaxSpend > 0) || math.IsInf(o.MaxSpend, 0) {
		return usageError{fmt.Errorf("--max-spend %v: give a positive amount of USD such as 5", o.MaxSpend)}
	}
	if o.SLO != "" {
		if _, err := load.ParseSLO(o.SLO); err != nil {
			return usageError{fmt.Errorf("--slo: %w", err)}
		}
	}
	return nil
}

// parseLevels reads a comma-separated list of increasing positive levels
// (whole numbers when whole is set).
func parseLevels(flag, s string, whole bool) ([]float64, error) {
	var out []float64
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		v, err := strconv.ParseFloat(part, 64)
		switch {
		case err != nil || !(v > 0) || math.IsInf(v, 0):
			what := "a positive number"
			if whole {
				what = "a positive whole number"
			}
			return nil, usageError{fmt.Errorf("%s: %q is not %s (give a comma-separated list such as 1,4,16)", flag, part, what)}
		case whole && v != math.Trunc(v):
			return nil, usageError{fmt.Errorf("%s: %q is not a whole number of requests in flight", flag, part)}
		case whole && v > maxLoadConcurrency:
			return nil, usageError{fmt.Errorf("%s: %q is above %d requests in flight", flag, part, maxLoadConcurrency)}
		case len(out) > 0 && v <= out[len(out)-1]:
			return nil, usageError{fmt.Errorf("%s: the steps go up: %s after %s", flag, part, units.Plain(out[len(out)-1]))}
		}
		out = append(out, v)
	}
	if len(out) > maxLoadLevels {
		return nil, usageError{fmt.Errorf("%s: %d steps; at most %d", flag, len(out), maxLoadLevels)}
	}
	return out, nil
}

// LoadSettings are how a load test was run, stored with its spec in the
// run's config (under "load_test") so its report says it again.
type loadSettings = report.LoadSettings

// loadConfig is a load run's stored config, as runLoad writes it and
// loadReport reads it: the resolved spec (its load.slo the SLO the test
// used) and the test's settings.
type loadConfig struct {
	*spec.Spec
	LoadTest *loadSettings `json:"load_test"`
}

func runLoad(ctx context.Context, g *Globals, o *loadOptions) error {
	t, err := task.LoadWith(o.Spec, specOptions(g, o.Files))
	if err != nil {
		return err
	}
	sp := t.Spec
	for _, w := range t.Dataset.Warnings {
		fmt.Fprintf(g.Stderr, "warning: %s\n", w)
	}
	sloText := o.SLO
	if sloText == "" {
		sloText = sp.Load.SLOString()
	}
	slo, err := load.ParseSLO(sloText)
	if err != nil {
		// The spec's load.slo was checked as it loaded: this is --slo's.
		return usageError{fmt.Errorf("--slo: %w", err)}
	}
	names, err := selectTargets(sp, o.Targets)
	if err != nil {
		return err
	}
	if err := checkLoadTargets(g, sp, names, o.Own); err != nil {
		return err
	}
	if slo.IsZero() {
		fmt.Fprintln(g.Stderr, "warning: no SLO (--slo or the spec's load.slo): every step is measured, but no knee can be found")
	}
	if sp.Agent != nil {
		fmt.Fprintln(g.Stderr, "warning: the spec's agent: loop is not run under load: each request is a case's first model call, its tool calls unanswered")
	}
	// The targets as a load test calls them: no limits (the load is the
	// levels), no retries, no cache.
	lsp := loadSpec(sp, o)
	var closers engine.Closers
	defer closers.Close()
	bo := registry.BuildOptions{Getenv: g.Getenv, Retries: 0, Cache: nil, Now: g.Now}
	provs, problems, err := g.providers().BuildEach(lsp, names, bo, (*[]io.Closer)(&closers))
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return problems
	}
	cases, err := sampleCases(lsp, o.Cases, o.Seed)
	if err != nil {
		return err
	}
	var targets []harness.Target
	offer := runner.OfferOf(lsp)
	for k, name := range names {
		ts := &lsp.Targets[slices.IndexFunc(lsp.Targets, func(x spec.Target) bool { return x.Name == name })]
		lt := harness.Target{Name: name, Provider: provs[k]}
		price := ts.Price
		if price != (spec.Price{}) {
			lt.Price = func(in, out int) float64 { return price.Cost(in, out, 0) }
		}
		for _, c := range cases {
			msgs, err := t.Prompt.Render(c.Vars)
			if err != nil {
				return fmt.Errorf("rendering case %s (line %d): %w", c.ID, c.Line, err)
			}
			lt.Requests = append(lt.Requests, provider.Request{
				Model: ts.Model, Messages: msgs, Params: provider.Params(ts.Params),
				Tools: offer.Tools, ToolChoice: offer.ToolChoice, ResponseFormat: offer.ResponseFormat,
				CaseID: c.ID, Vars: c.Vars, Epoch: 1,
			})
			lt.CaseIDs = append(lt.CaseIDs, c.ID)
		}
		targets = append(targets, lt)
	}

	st, err := openStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	settings := &loadSettings{
		Mode: o.mode, Levels: o.levels, Duration: o.Duration.String(), Warmup: o.Warmup.String(),
		Arrivals: o.Arrivals, Seed: o.Seed, Cases: len(cases), MaxRequests: o.MaxRequests, MaxSpend: o.MaxSpend,
		SLO: slo.String(),
	}
	if o.mode == load.ModeConcurrency {
		settings.Arrivals = ""
	}
	cfgSpec := *sp
	cfgSpec.Load = &spec.LoadTest{}
	if sp.Load != nil {
		*cfgSpec.Load = *sp.Load
	}
	cfgSpec.Load.SLO = sloSpec(slo)
	cfg, err := json.Marshal(loadConfig{Spec: &cfgSpec, LoadTest: settings})
	if err != nil {
		return fmt.Errorf("load: recording the spec: %w", err)
	}
	rec := &record.Run{
		ID:           record.NewRunID(g.Now()),
		Kind:         record.KindLoad,
		Spec:         sp.Name,
		SpecPath:     sp.File,
		SpecHash:     sp.Hash,
		DatasetHash:  t.Dataset.Hash,
		FileHash:     t.Dataset.FileHash,
		PromptHash:   sp.PromptHash(),
		GitCommit:    engine.GitCommit(ctx, sp.Dir),
		AssayVersion: Version(),
		Targets:      names,
		Cases:        len(cases),
		Epochs:       1,
		Status:       record.StatusRunning,
		Started:      g.Now().UTC(),
		Config:       cfg,
	}
	if err := st.CreateRun(ctx, rec); err != nil {
		return err
	}
	fmt.Fprintf(g.Stderr, "load test %s: %s × %s of %s (%s), %s\n",
		rec.ID, plural(len(names), "target"), plural(len(o.levels), "step"), o.Duration, levelsText(o.mode, o.levels), plural(len(cases), "case"))

	// Writes use a context an interrupt does not cancel: what was measured
	// is kept.
	wctx := context.WithoutCancel(ctx)
	sink := storeSink{ctx: wctx, st: st}
	runCtx, stop, unwatch := watchInterruptsSaying(ctx, g,
		"interrupt: stopping the load test; requests in flight are cancelled, what was measured is kept", "")
	runErr := harness.Run(runCtx, targets, harness.Options{
		Mode: o.mode, Levels: o.levels, Duration: o.Duration, Warmup: o.Warmup,
		Arrivals: o.Arrivals, Seed: o.Seed, MaxRequests: o.MaxRequests, MaxSpend: o.MaxSpend,
		SLO: slo, RunID: rec.ID, Now: g.Now,
		Progress: func(s record.LoadStep) { progressStep(g, s) },
	}, sink, stop)
	unwatch()
	switch {
	case runErr == nil:
		rec.Status = record.StatusComplete
	case errors.Is(runErr, harness.ErrInterrupted):
		rec.Status = record.StatusInterrupted
	default:
		rec.Status = record.StatusFailed
	}
	rec.Ended = g.Now().UTC()
	if err := st.UpdateRun(wctx, rec); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil && rec.Status == record.StatusFailed {
		return fmt.Errorf("load test %s failed: %w", rec.ID, runErr)
	}
	// The report is of the run as stored, as assay report shows it later.
	stored, err := st.GetRun(wctx, rec.ID)
	if err != nil {
		return err
	}
	doc, err := loadReport(wctx, st, stored)
	if err != nil {
		return err
	}
	r, err := report.NewRegistry().Load.Reporter(o.Format, doc)
	if err != nil {
		return err
	}
	if err := printOut(g.Stdout, o.Output, r); err != nil {
		return err
	}
	if rec.Status == record.StatusInterrupted {
		return fmt.Errorf("%w: load test %s stopped; what was measured is stored (assay report %s)", ErrInterrupted, rec.ID, rec.ID)
	}
	fmt.Fprintf(g.Stderr, "%s: assay report %s\n", rec.Status, rec.ID)
	return nil
}

// checkLoadTargets refuses a target whose endpoint is not loopback unless
// --i-own-this-endpoint is given or the spec's load.allow lists it. A
// target that is not hosted (exec, replay) calls no endpoint.
func checkLoadTargets(g *Globals, sp *spec.Spec, names []string, own bool) error {
	if own {
		return nil
	}
	for _, name := range names {
		tg := sp.Targets[slices.IndexFunc(sp.Targets, func(x spec.Target) bool { return x.Name == name })]
		f, ok := g.providers().Lookup(tg.Provider)
		if !ok || !f.Info.Hosted {
			continue
		}
		if tg.BaseURL == "" {
			return usageError{fmt.Errorf("target %s has no base_url: it calls %s's public endpoint, which is not loopback; a load test needs --i-own-this-endpoint (or its base URL listed under the spec's load.allow)", name, tg.Provider)}
		}
		u, err := url.Parse(tg.BaseURL)
		if err == nil && httpguard.LoopbackHost(u.Host) {
			continue
		}
		if sp.Load.Allows(tg.BaseURL) {
			continue
		}
		return usageError{fmt.Errorf("target %s: base URL %s is not loopback; a load test against it needs --i-own-this-endpoint, or the URL listed under the spec's load.allow", name, redactURL(tg.BaseURL))}
	}
	return nil
}

// redactURL is a URL for a message: without a user or password.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return strconv.Quote(s)
	}
	u.User = nil
	return u.String()
}

// loadSpec is sp with its targets' limits lifted: a target's concurrency
// is the most a step can have in flight (a closed loop's highest level, an
// open loop's rate × the target's time-out), at most maxLoadConcurrency.
func loadSpec(sp *spec.Spec, o *loadOptions) *spec.Spec {
	c := *sp
	c.Targets = slices.Clone(sp.Targets)
	top := o.levels[len(o.levels)-1]
	for i := range c.Targets {
		need := top
		if o.mode == load.ModeRate {
			need = math.Ceil(top * sp.TargetTimeout(&c.Targets[i]).Seconds())
		}
		c.Targets[i].Limits = spec.Limits{Concurrency: int(min(max(need, spec.DefaultConcurrency), maxLoadConcurrency))}
	}
	return &c
}

// sampleCases draws n cases from the dataset, seeded (all of them, in a
// seeded order, when it has n or fewer): a reservoir sample, so a large
// dataset is streamed, never held.
func sampleCases(sp *spec.Spec, n int, seed uint64) ([]*dataset.Case, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6c6f6164)) // "load"
	var out []*dataset.Case
	seen := 0
	err := dataset.Each(sp, func(c *dataset.Case) error {
		seen++
		if len(out) < n {
			out = append(out, c)
		} else if j := rng.IntN(seen); j < n {
			out[j] = c
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the dataset %s has no cases to send", sp.Dataset.Path)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// sloSpec writes an SLO as the spec's load.slo (nil when none is set).
func sloSpec(s load.SLO) *spec.LoadSLO {
	if s.IsZero() {
		return nil
	}
	var out spec.LoadSLO
	if s.P95 > 0 {
		out.P95 = s.P95.String()
	}
	if s.TTFT95 > 0 {
		out.TTFT95 = s.TTFT95.String()
	}
	if s.ErrorsSet {
		out.Errors = units.PlainPct(s.Errors)
	}
	return &out
}

func levelsText(mode string, levels []float64) string {
	parts := joinFloats(levels, ", ")
	if mode == load.ModeRate {
		return parts + " requests/s"
	}
	return parts + " in flight"
}

// progressStep says on stderr how a step went.
func progressStep(g *Globals, s record.LoadStep) {
	level := levelsText(s.Mode, []float64{s.Level})
	if s.Skipped != "" {
		fmt.Fprintf(g.Stderr, "  %s at %s: %s\n", s.Target, level, s.Skipped)
		return
	}
	sat := ""
	if s.Saturated {
		sat = " [client_saturated]"
	}
	fmt.Fprintf(g.Stderr, "  %s at %s: %d sent, %d done in %.1fs%s\n", s.Target, level, s.Sent, s.Done, s.DurationMS/1000, sat)
}

// storeSink hands what a load test measured to the store as it goes.
type storeSink struct {
	ctx context.Context
	st  store.Store
}

func (s storeSink) Steps(steps []record.LoadStep) error { return s.st.PutLoadSteps(s.ctx, steps) }
func (s storeSink) Requests(reqs []record.LoadRequest) error {
	return s.st.PutLoadRequests(s.ctx, reqs)
}

// loadReport reads a load run's steps and requests and analyses them with
// the SLO, seed and volume it was run with.
func loadReport(ctx context.Context, st store.Store, run *record.Run) (*report.LoadReport, error) {
	data, err := loadData(ctx, st, run)
	if err != nil {
		return nil, err
	}
	cfg := loadConfig{Spec: &spec.Spec{}}
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("load test %s: its stored config is not JSON: %w", run.ID, err)
		}
	}
	doc := &report.LoadReport{Run: run, Settings: cfg.LoadTest}
	if len(data.Steps) == 0 {
		doc.Result = &load.Result{Warnings: []string{"the load test recorded no step (it stopped before its first)"}}
		return doc, nil
	}
	var slo load.SLO
	if cfg.LoadTest != nil && cfg.LoadTest.SLO != "" {
		if slo, err = load.ParseSLO(cfg.LoadTest.SLO); err != nil {
			return nil, fmt.Errorf("load test %s: stored SLO: %w", run.ID, err)
		}
	}
	seed := uint64(1)
	if cfg.LoadTest != nil {
		seed = cfg.LoadTest.Seed
	}
	res, err := load.Analyse(data.Steps, data.Requests, load.AnalyseOptions{SLO: slo, Seed: seed, RequestsPerMonth: cfg.Volume.RequestsPerMonth})
	if err != nil {
		return nil, fmt.Errorf("load test %s: %w", run.ID, err)
	}
	doc.Result = res
	return doc, nil
}

// loadData reads a load run's steps and requests, its targets in the
// order they were run (the run's), each target's steps in order.
func loadData(ctx context.Context, st store.Store, run *record.Run) (load.Data, error) {
	var d load.Data
	if err := st.LoadSteps(ctx, run.ID, func(s record.LoadStep) error { d.Steps = append(d.Steps, s); return nil }); err != nil {
		return d, err
	}
	if err := st.LoadRequests(ctx, run.ID, func(r record.LoadRequest) error { d.Requests = append(d.Requests, r); return nil }); err != nil {
		return d, err
	}
	order := func(target string) int {
		if i := slices.Index(run.Targets, target); i >= 0 {
			return i
		}
		return len(run.Targets)
	}
	slices.SortStableFunc(d.Steps, func(a, b record.LoadStep) int {
		if c := order(a.Target) - order(b.Target); c != 0 {
			return c
		}
		return a.Step - b.Step
	})
	slices.SortStableFunc(d.Requests, func(a, b record.LoadRequest) int {
		if c := order(a.Target) - order(b.Target); c != 0 {
			return c
		}
		if a.Step != b.Step {
			return a.Step - b.Step
		}
		return a.Seq - b.Seq
	})
	return d, nil
}

// reportLoad is `assay report` of a load run: the load report, in one of
// its formats.
func reportLoad(ctx context.Context, g *Globals, st store.Store, run *record.Run, format, output string) error {
	names := report.NewRegistry().Load.Names()
	if !slices.Contains(names, format) {
		return usageError{fmt.Errorf("--format %q: run %s is a load test, whose formats are %s", format, run.ID, strings.Join(names, ", "))}
	}
	doc, err := loadReport(ctx, st, run)
	if err != nil {
		return err
	}
	r, err := report.NewRegistry().Load.Reporter(format, doc)
	if err != nil {
		return err
	}
	return printOut(g.Stdout, output, r)
}

// runLoadGate is `assay gate` of a load run: the candidate held against a
// baseline load run with the load.gate rules of the baseline's spec (or
// the candidate's, --rules-from candidate), each judged at its level by a
// one-sided bootstrap over requests.
func runLoadGate(ctx context.Context, g *Globals, st store.Store, cand *record.Run, o *gateOptions) error {
	names := report.NewRegistry().LoadGate.Names()
	if !slices.Contains(names, o.Format) {
		return usageError{fmt.Errorf("--format %q: a gate of load tests renders as %s", o.Format, strings.Join(names, ", "))}
	}
	if len(o.Rules) > 0 {
		return usageError{errors.New("--rule: a gate of load tests takes its rules from the spec's load.gate ({metric: p95|p99|ttft95|errors, at: RATE, max_rise: 20%|300ms|2pt})")}
	}
	if _, err := os.Stat(o.Baseline); err == nil {
		return usageError{fmt.Errorf("--baseline %s is a file: a load test is gated against a stored load run (give its ID)", o.Baseline)}
	}
	base, err := getRun(ctx, st, "gate: baseline "+o.Baseline, o.Baseline)
	if err != nil {
		return err
	}
	if base.Kind != record.KindLoad {
		return usageError{fmt.Errorf("gate: the candidate %s is a load test but the baseline %s is not: give a load run as --baseline", cand.ID, base.ID)}
	}
	for _, r := range []*record.Run{base, cand} {
		if r.Status != record.StatusComplete && !o.AllowPartial {
			return fmt.Errorf("gate: load test %s is %s, not complete: its later steps were not run; gate it anyway with --allow-partial", r.ID, r.Status)
		}
	}
	from := base
	if o.RulesFrom == gate.RulesCandidate {
		from = cand
	}
	cfg, err := spec.Stored(from.Config, from.SpecPath)
	if err != nil {
		return fmt.Errorf("gate: load test %s: %w", from.ID, err)
	}
	if cfg.Load == nil || len(cfg.Load.Gate) == 0 {
		return usageError{fmt.Errorf("gate: the spec of load test %s (the %s) has no load.gate rules; add e.g. load: {gate: [{metric: p95, at: 20, max_rise: 20%%}]}", from.ID, o.RulesFrom)}
	}
	var rules []load.Rule
	for _, r := range cfg.Load.Gate {
		rules = append(rules, load.Rule{Metric: r.Metric, At: r.At, MaxRise: r.MaxRise})
	}
	bd, err := loadData(ctx, st, base)
	if err != nil {
		return err
	}
	cd, err := loadData(ctx, st, cand)
	if err != nil {
		return err
	}
	targets, _ := splitTargets(o.Targets)
	if len(targets) > 0 {
		for _, t := range targets {
			if !slices.Contains(base.Targets, t) && !slices.Contains(cand.Targets, t) {
				return usageError{fmt.Errorf("--targets: %q is in neither load test (baseline: %s; candidate: %s)", t, strings.Join(base.Targets, ", "), strings.Join(cand.Targets, ", "))}
			}
		}
		bd, cd = onlyTargets(bd, targets), onlyTargets(cd, targets)
	}
	res, err := load.Gate(bd, cd, rules, load.GateOptions{Alpha: o.Alpha, Seed: 1})
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	doc := &report.LoadGateReport{Base: base, Cand: cand, RulesFrom: o.RulesFrom, Strict: o.Strict, Result: res}
	reg := report.NewRegistry().LoadGate
	r, err := reg.Reporter(o.Format, doc)
	if err != nil {
		return err
	}
	if o.Output != "" {
		if err := writeOutput(o.Output, r); err != nil {
			return fmt.Errorf("gate: writing %s: %w", o.Output, err)
		}
		if err := report.LoadGateText(g.Stdout, doc); err != nil {
			return err
		}
	} else if err := r(g.Stdout); err != nil {
		return err
	}
	if o.Summary != "" {
		if err := writeOutput(o.Summary, func(w io.Writer) error { return report.LoadGateMarkdown(w, doc) }); err != nil {
			return fmt.Errorf("gate: --summary %s: %w", o.Summary, err)
		}
	}
	if v := doc.Verdict(); v == load.Fail {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("gate failed: %s", doc.Failed())}
	}
	return nil
}

// onlyTargets keeps the steps and requests of the named targets.
func onlyTargets(d load.Data, targets []string) load.Data {
	var out load.Data
	for _, s := range d.Steps {
		if slices.Contains(targets, s.Target) {
			out.Steps = append(out.Steps, s)
		}
	}
	for _, r := range d.Requests {
		if slices.Contains(targets, r.Target) {
			out.Requests = append(out.Requests, r)
		}
	}
	return out
}
