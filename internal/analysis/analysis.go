// Package analysis turns a run's stored results and scores into findings:
// per-target counts, rates with intervals, failure shapes, latency tails,
// tokens and cost, and a label scorer's confusion matrices (confusion.go).
// It produces plain structs that report renders; it reads
// the store and uses stats, and never calls a model or formats output.
package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/stats"
)

// Report is the analysis of one run (the JSON report's shape, DESIGN.md).
type Report struct {
	Run     RunInfo  `json:"run"`
	Targets []Target `json:"targets"`
	// Comparisons pair every two targets on the same cases (primary scorer).
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Ranking groups targets that the paired comparisons cannot separate.
	Ranking []RankGroup `json:"ranking,omitempty"`
	// Pareto names the targets on the quality × cost × p95-latency frontier.
	Pareto []string `json:"pareto,omitempty"`
	// Warnings say where the evidence is thin (coverage, slice sizes, epochs).
	Warnings []string `json:"warnings,omitempty"`
	// Worst are the failures most worth reading, with their outputs: the
	// costliest first (ErrorCost), silent before loud at equal cost.
	Worst []FailureExample `json:"worst,omitempty"`
	// FailureCount is how many primary-scorer failures the run has in all
	// (Worst lists at most Options.Worst of them).
	FailureCount int `json:"failure_count"`
	// Spec is the resolved spec the run was made with (JSON).
	Spec json.RawMessage `json:"spec_config,omitempty"`
	// Ledger counts the variants tried in the run's experiment and corrects
	// the chosen one's lead for them (nil when the run has no experiment).
	Ledger *Ledger `json:"ledger,omitempty"`
	// ClassComparisons compare every two targets' recall class by class
	// under the run's label scorer (confusion.go).
	ClassComparisons []ClassComparison `json:"class_comparisons,omitempty"`
	// Calls are the tool-call and agent-loop findings (calls.go), when
	// some result made a call or ran a loop.
	Calls *CallReport `json:"calls,omitempty"`
}

// RunInfo says what was measured.
type RunInfo struct {
	ID       string `json:"id"`
	Spec     string `json:"spec"`
	SpecHash string `json:"spec_hash"`
	// DatasetHash is the dataset's content hash, FileHash its file's byte
	// hash ("" for a run recorded before content hashes, whose
	// DatasetHash is the byte hash).
	DatasetHash string `json:"dataset_hash"`
	FileHash    string `json:"file_hash,omitempty"`
	PromptHash  string `json:"prompt_hash"`
	GitCommit   string `json:"git_commit,omitempty"`
	// ScorersHash names the definition of correct (parser and scorers).
	ScorersHash  string `json:"scorers_hash,omitempty"`
	AssayVersion string `json:"assay_version,omitempty"`
	Experiment   string `json:"experiment,omitempty"`
	Cases        int    `json:"cases"`
	Epochs       int    `json:"epochs"`
	Status       string `json:"status"`
	Scoring      int    `json:"scoring"`
	// ScoringScorersHash is the scorers hash a rescore (Scoring > 1) was
	// made with ("" for the run's own scoring, or when not recorded).
	ScoringScorersHash string `json:"scoring_scorers_hash,omitempty"`
	Started            string `json:"started"`
	Ended              string `json:"ended,omitempty"`
}

// Rate is passed out of n with its interval.
type Rate struct {
	Scorer   string     `json:"scorer,omitempty"`
	Passed   int        `json:"passed"`
	N        int        `json:"n"`
	Rate     float64    `json:"rate"`
	CI       [2]float64 `json:"ci"`
	CIMethod string     `json:"ci_method,omitempty"`
	// SE is the standard error of the rate when the interval comes from one
	// (epochs averaged per case, or clustered cases).
	SE float64 `json:"se,omitempty"`
}

// Failures counts how a target failed.
type Failures struct {
	Loud   int            `json:"loud"`
	Silent int            `json:"silent"`
	ByKind map[string]int `json:"by_kind"`
	// LoudToSilent is loud failures per silent one: below 1, most failures
	// are well-formed and wrong, the kind nothing downstream catches.
	LoudToSilent *float64 `json:"loud_to_silent,omitempty"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	// FirstToken holds the same percentiles of time to first token, when
	// the target streamed.
	FirstToken *Percentiles `json:"first_token,omitempty"`
	// Samples are the latencies (ms) of successful calls, for plots; not in JSON.
	Samples []float64 `json:"-"`
	// FromCache counts the results the response cache served: their
	// latency is that of the call that first made them, not this run's.
	FromCache int `json:"from_cache,omitempty"`
}

// Percentiles in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Tokens are totals over the target's results.
type Tokens struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	Cached int `json:"cached"`
}

// Cost is in USD. Total is what the target's calls cost in this run: a
// reply served from the response cache is never billed again (it costs 0)
// and its price is counted in SavedUSD instead. The per-case figures are at
// the target's price whether a reply was paid or served from the cache
// ((Total + SavedUSD) / N): what the model costs, which a cache does not
// change.
type Cost struct {
	Total float64 `json:"total"`
	// SavedUSD is what the replies served from the cache would have cost.
	SavedUSD float64  `json:"saved_usd"`
	PerCase  float64  `json:"per_case"`
	PerMonth *float64 `json:"per_month,omitempty"`
	// PerCorrect is the inference cost per passing answer.
	PerCorrect *float64 `json:"per_correct,omitempty"`
	// ErrorsPerCase is the expected cost of errors per case (error costs);
	// TotalPerCase = PerCase + ErrorsPerCase: the cost of a task done.
	ErrorsPerCase float64 `json:"errors_per_case"`
	TotalPerCase  float64 `json:"total_per_case"`
}

// Target is the findings for one target.
type Target struct {
	Name      string          `json:"name"`
	N         int             `json:"n"`
	Errors    int             `json:"errors"`
	Primary   Rate            `json:"primary"`
	Scorers   map[string]Rate `json:"scorers"`
	Failures  Failures        `json:"failures"`
	LatencyMS Latency         `json:"latency_ms"`
	Tokens    Tokens          `json:"tokens"`
	CostUSD   Cost            `json:"cost_usd"`
	// JudgeCostUSD is what grading this target's outputs cost (judge calls),
	// kept apart from the target's own cost.
	JudgeCostUSD float64 `json:"judge_cost_usd"`
	// JudgeSavedUSD is what the judge verdicts served from the cache would
	// have cost (never billed again; not in JudgeCostUSD).
	JudgeSavedUSD float64 `json:"judge_saved_usd"`
	// Judges are the judge scorers' errors and cost on this target.
	Judges []JudgeStats `json:"judges,omitempty"`
	// Fields are the per-field rates of each field scorer (field_equals),
	// scorer → fields in the scorer's order.
	Fields map[string][]FieldRate `json:"fields,omitempty"`
	// Classes is the confusion matrix and per-class precision, recall and
	// F1 of the run's label scorer (confusion.go), when it has one.
	Classes *Classes `json:"classes,omitempty"`
	// Pairwise are the pairwise judges' wins, ties and losses against
	// their baseline target (pairwise.go), in spec order.
	Pairwise []Pairwise `json:"pairwise,omitempty"`
	// Slices are the primary scorer's rates per tag: key → value → rate.
	Slices map[string]map[string]Rate `json:"slices,omitempty"`
	// ErrorCost is the priced cost of the primary scorer's failures (the
	// spec's error_costs and the cases' weights).
	ErrorCost float64 `json:"error_cost"`
	// Epochs describes the repeats when cases ran more than once.
	Epochs *EpochStats `json:"epochs,omitempty"`
	// Redactions is the number of secrets replaced in this target's stored
	// outputs and errors (a target that echoed a key it was given).
	Redactions int `json:"redactions,omitempty"`
	// Attempts counts the calls behind the target's stored results,
	// provider retries included.
	Attempts int `json:"attempts"`
	// Retried counts results that `run --retry-errors` called again.
	Retried int `json:"retried,omitempty"`
	// RateLimited counts results that failed as rate_limited once every
	// retry was spent: the harness asked too fast (a warning says so), not
	// the model's failure.
	RateLimited int `json:"rate_limited,omitempty"`
	// ParseTolerated counts the results whose headline score records that
	// the json parser tolerated a ``` fence or prose around the value
	// (record.Score.ParseNote); with output.strict those fail instead.
	ParseTolerated int `json:"parse_tolerated"`
}

// EpochStats summarises repeated runs of the same cases.
type EpochStats struct {
	Cases int `json:"cases"`
	// WithinVar is the mean within-case variance of the primary score across
	// epochs: how much the target's answer to one case varies run to run.
	WithinVar float64 `json:"within_case_variance"`
	// Epochs is K, the number of epochs behind EpochRates and BetweenRunSD
	// (absent when fewer than two cases ran in every epoch).
	Epochs int `json:"epochs,omitempty"`
	// CompleteCases are the cases scored in every epoch, over which each
	// epoch's rate is taken.
	CompleteCases int `json:"complete_cases,omitempty"`
	// EpochRates is the primary rate of each epoch on its own: K runs of
	// the same cases.
	EpochRates []float64 `json:"epoch_rates,omitempty"`
	// BetweenRunSD is the standard deviation (n−1) of EpochRates: how far
	// one run of the target moves from the next on the same cases, beside
	// the primary rate's SE, which is across cases.
	BetweenRunSD *float64 `json:"between_run_sd,omitempty"`
	// TotalVar is the variance (n−1) of every scored primary verdict.
	TotalVar float64 `json:"total_variance,omitempty"`
	// WithinShare is WithinVar/TotalVar: the fraction of the variance of
	// one answer that is within cases (the model answering the same case
	// differently), the rest being between cases.
	WithinShare *float64 `json:"within_case_share,omitempty"`
}

// Options tune the analysis.
type Options struct {
	Alpha float64 // 0.05 by default
	// RequestsPerMonth prices the per-case cost at the team's volume.
	RequestsPerMonth float64
	// Scoring selects a scoring of the run; 0 means the latest.
	Scoring int
	// Worst is how many failures to show with their outputs (default 20;
	// negative: all of them).
	Worst int
	// Margin is the equivalence margin of the paired verdicts (default 0.02).
	Margin float64
	// Reference names the selection ledger's reference variant
	// (ParseVariantRef); the zero value means the experiment's first variant.
	Reference VariantRef
	// NoLedger skips the selection ledger (it reads the experiment's other
	// runs).
	NoLedger bool
	// Test is the paired pass/fail test (ParseTest): "" or
	// stats.TestMcNemarScore, the McNemar score test with Tango's interval
	// (the default); stats.TestMcNemarExact, exact McNemar with Newcombe's
	// interval. Clustered cases and several epochs use a t test whatever
	// it says.
	Test string
	// RateCI is the interval of a rate when each case ran once and cases
	// are not clustered (ParseRateCI): "" or stats.MethodWilson (the
	// default), stats.MethodClopperPearson or stats.MethodJeffreys.
	RateCI string
}

// Tests names the values of --test, the default first.
var Tests = []string{"score", "exact"}

// ParseTest reads --test: "score" (the McNemar score test with Tango's
// interval) or "exact" (exact McNemar with Newcombe's interval).
func ParseTest(s string) (string, error) {
	switch s {
	case "", "score", stats.TestMcNemarScore:
		return stats.TestMcNemarScore, nil
	case "exact", stats.TestMcNemarExact:
		return stats.TestMcNemarExact, nil
	}
	return "", fmt.Errorf("unknown test %q: valid tests are score (McNemar score test, Tango interval; the default) and exact (exact McNemar, Newcombe interval)", s)
}

// RateCIs names the values of --ci, the default first.
var RateCIs = []string{"wilson", "cp", "jeffreys"}

// ParseRateCI reads --ci: wilson, cp (Clopper–Pearson) or jeffreys.
func ParseRateCI(s string) (string, error) {
	switch s {
	case "", "wilson":
		return stats.MethodWilson, nil
	case "cp", stats.MethodClopperPearson:
		return stats.MethodClopperPearson, nil
	case "jeffreys":
		return stats.MethodJeffreys, nil
	}
	return "", fmt.Errorf("unknown interval %q: valid intervals are wilson (the default), cp (Clopper–Pearson, exact) and jeffreys", s)
}

// withDefaults fills the options' defaults and checks the test and the
// interval names.
func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Margin == 0 {
		o.Margin = stats.DefaultEquivalenceMargin
	}
	var err error
	if o.Test, err = ParseTest(o.Test); err != nil {
		return o, err
	}
	if o.RateCI, err = ParseRateCI(o.RateCI); err != nil {
		return o, err
	}
	return o, nil
}

// acc is what the report counts of one target beside the run's view: the
// verdicts themselves (every scorer's, per case and epoch) are the view's
// columns, read once both passes are done.
type acc struct {
	t         Target
	fromCache int // results the response cache served
	fails     map[string]*Failures
	errCost   map[string]float64
	// pass holds the primary verdicts, for paired comparisons: the view's
	// column of the primary scorer (set once the view is built).
	pass *verdicts
	// fields holds the field scorers' per-field verdicts: scorer → field,
	// on the view's case index.
	fields map[string]map[string]*fieldAcc
	// listed marks, per field scorer, the results whose score listed
	// per-field verdicts at all: a field such a score leaves out does not
	// apply to its case (a tool_call case expecting another tool's
	// arguments), where a score listing none could not compare any.
	listed map[string]*verdicts
	// scorerErrs counts each scorer's scorer_error verdicts (the scorer
	// could not judge: its configuration or the case's expected value is
	// wrong), with the first one's reason.
	scorerErrs map[string]*scorerErrs
	// judge counts each scorer's judge errors and cost.
	judge map[string]*judgeAcc
	// order is the scorers of the target's scores, in the order first seen.
	order   []string
	primary string // the first scorer flagged primary
}

// Analyze reads the run's results and scores and computes the findings.
func Analyze(ctx context.Context, st record.Reader, run *record.Run, o Options) (*Report, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	scoring := o.Scoring
	if scoring == 0 {
		var err error
		scoring, err = st.LatestScoring(ctx, run.ID)
		if err != nil {
			return nil, err
		}
	}
	rep := &Report{Run: runInfo(run, scoring)}
	if scoring > 1 {
		h, err := st.ScoringScorersHash(ctx, run.ID, scoring)
		if err != nil {
			return nil, err
		}
		rep.Run.ScoringScorersHash = h
	}
	accs := map[string]*acc{}
	var mu sync.Mutex // guards accs: the results and scores passes run at once
	get := func(name string) *acc {
		mu.Lock()
		defer mu.Unlock()
		a := accs[name]
		if a == nil {
			a = &acc{t: Target{Name: name, Scorers: map[string]Rate{}, Failures: Failures{ByKind: map[string]int{}}},
				fails: map[string]*Failures{}, errCost: map[string]float64{}, judge: map[string]*judgeAcc{}}
			accs[name] = a
		}
		return a
	}
	for _, name := range run.Targets {
		get(name)
	}
	worst := newWorstList(o.Worst)
	// The tool-call measures (calls.go), read by the results pass only.
	calls := newCallAcc(run)
	var fo fieldOrder // read by the scores pass only
	// The run's view (runview) holds the per-case verdicts of every scorer,
	// the cases with their tags, and the timings: what the rates, slices,
	// paired comparisons and latency percentiles read, so they are the
	// numbers the gate, drift and compare read of the same run. It keeps
	// every stored score (ScoresWithoutResults), as the report always
	// counted them, and only its verdict and timing columns.
	vb := runview.NewBuilder(run, scoring, runview.Options{ScoresWithoutResults: true, VerdictsAndTimings: true})
	err = st.Cases(ctx, run.ID, func(c record.Case) error {
		// The report reads the expected values of the worst failures only
		// (worst.fillExpected): the view keeps the cases' IDs and tags.
		c.Expected, c.Weight = nil, nil
		vb.AddCase(&c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading cases: %w", err)
	}
	// Scores and results are read at once, on two connections: each pass
	// touches its own fields of the accumulators, and the view's Builder
	// takes both at once.
	var g errgroup.Group
	g.Go(func() error {
		if scoring == 0 {
			return nil
		}
		err := st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
			ix := vb.AddScore(&s)
			a := get(s.Target)
			if !slices.Contains(a.order, s.Scorer) {
				a.order = append(a.order, s.Scorer)
			}
			a.addFields(&fo, &s, ix, run.Epochs)
			j := a.judge[s.Scorer]
			if j == nil {
				j = &judgeAcc{}
				a.judge[s.Scorer] = j
			}
			j.n++
			j.cost += s.JudgeCost
			j.saved += s.JudgeSaved
			if s.Kind == "judge_error" {
				j.errors++
			}
			if s.Kind == "scorer_error" {
				if a.scorerErrs == nil {
					a.scorerErrs = map[string]*scorerErrs{}
				}
				e := a.scorerErrs[s.Scorer]
				if e == nil {
					e = &scorerErrs{reason: s.Reason}
					a.scorerErrs[s.Scorer] = e
				}
				e.n++
			}
			f := a.fails[s.Scorer]
			if f == nil {
				f = &Failures{ByKind: map[string]int{}}
				a.fails[s.Scorer] = f
			}
			switch s.Shape {
			case "loud":
				f.Loud++
				f.ByKind[s.Kind]++
			case "silent":
				f.Silent++
				f.ByKind[s.Kind]++
			}
			if s.Primary {
				if a.primary == "" {
					a.primary = s.Scorer
				}
				if s.ParseNote != "" {
					a.t.ParseTolerated++
				}
				if !s.Pass {
					worst.offer(FailureExample{Target: s.Target, CaseID: s.CaseID, Epoch: s.Epoch, Shape: s.Shape,
						Kind: s.Kind, Reason: s.Reason, ErrorCost: s.ErrorCost})
				}
			}
			a.t.JudgeCostUSD += s.JudgeCost
			a.t.JudgeSavedUSD += s.JudgeSaved
			a.errCost[s.Scorer] += s.ErrorCost
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading scores: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		err := st.Results(ctx, run.ID, func(r record.Result) error {
			vb.AddResult(&r)
			calls.add(&r)
			a := get(r.Target)
			a.t.N++
			if r.ErrorKind != "" {
				a.t.Errors++
			}
			a.t.Tokens.Input += r.InputTokens
			a.t.Tokens.Output += r.OutputTokens
			a.t.Tokens.Cached += r.CachedTokens
			if r.FromCache {
				a.fromCache++
			}
			a.t.CostUSD.Total += r.CostUSD
			a.t.CostUSD.SavedUSD += r.SavedUSD
			a.t.Redactions += r.Redactions
			a.t.Attempts += r.Attempts
			if r.Retries > 0 {
				a.t.Retried++
			}
			if r.ErrorKind == rateLimitedKind {
				a.t.RateLimited++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading results: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := calls.reread(ctx, st, run.ID); err != nil {
		return nil, err
	}
	view := vb.View()
	ci := casesOf(view)
	// The outputs of the failures worth reading, by key.
	if err := worst.fillResults(ctx, st, run.ID); err != nil {
		return nil, err
	}
	judgeTypes := judgeScorers(run.Config)
	var errWarnings []string // scorers that could not judge some results
	passByTarget := map[string]*verdicts{}
	names := slices.Clone(run.Targets)
	for name := range accs {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		a := accs[name]
		t := a.t
		vt := view.Target(name)
		for _, s := range a.order {
			vs := viewColumn(view, vt, s)
			passed, n := vs.count()
			r := rate(s, passed, n, o.Alpha, o.RateCI)
			if r.CIMethod == "" {
				r.CIMethod = stats.MethodWilson
			}
			primaryInterval(&r, vs, ci, o.Alpha)
			t.Scorers[s] = r
		}
		t.Fields = a.fieldRates(&fo, view, vt, ci, o.Alpha, o.RateCI, run.Epochs)
		for _, sc := range a.order {
			if e := a.scorerErrs[sc]; e != nil {
				errWarnings = append(errWarnings, scorerErrorWarning(name, sc, e, a.judge[sc].n))
			}
		}
		t.Judges = a.judges(judgeTypes)
		// A run with several primary scorers also stores their combination
		// under the name "primary"; it is then the primary score.
		if slices.Contains(a.order, "primary") {
			a.primary = "primary"
		}
		a.pass = &verdicts{epochs: view.Epochs}
		if a.primary != "" {
			if vs := viewColumn(view, vt, a.primary); vs != nil {
				a.pass = vs
			}
			t.Failures = *a.fails[a.primary]
			if t.Failures.Silent > 0 {
				r := round4(float64(t.Failures.Loud) / float64(t.Failures.Silent))
				t.Failures.LoudToSilent = &r
			}
			t.ErrorCost = a.errCost[a.primary]
			for k, byValue := range sliceCounts(a.pass, ci) {
				for v, c := range byValue {
					if c[1] == 0 {
						continue
					}
					if t.Slices == nil {
						t.Slices = map[string]map[string]Rate{}
					}
					if t.Slices[ci.keys[k]] == nil {
						t.Slices[ci.keys[k]] = map[string]Rate{}
					}
					r := rate("", c[0], c[1], o.Alpha, o.RateCI)
					// Several epochs or clustered cases: the slice's interval
					// is made as the target's is.
					sliceInterval(&r, a.pass, ci, o.Alpha, k, v)
					t.Slices[ci.keys[k]][ci.vals[k][v]] = r
				}
			}
			t.Primary = t.Scorers[a.primary]
			t.Primary.Scorer = a.primary
			t.Epochs = primaryInterval(&t.Primary, a.pass, ci, o.Alpha)
		}
		var lat, ttft []float64
		if vt != nil {
			lat, ttft = vt.Latencies(), vt.FirstTokens()
		}
		t.LatencyMS = Latency{P50: quantile(lat, 0.50), P95: quantile(lat, 0.95), P99: quantile(lat, 0.99), Samples: lat, FromCache: a.fromCache}
		if len(ttft) > 0 {
			t.LatencyMS.FirstToken = &Percentiles{P50: quantile(ttft, 0.50), P95: quantile(ttft, 0.95), P99: quantile(ttft, 0.99)}
		}
		if t.N > 0 {
			c := &t.CostUSD
			c.PerCase = (c.Total + c.SavedUSD) / float64(t.N)
			if o.RequestsPerMonth > 0 {
				m := c.PerCase * o.RequestsPerMonth
				c.PerMonth = &m
			}
			if t.Primary.Passed > 0 {
				pc := (c.Total + c.SavedUSD) / float64(t.Primary.Passed)
				c.PerCorrect = &pc
			}
			c.ErrorsPerCase = t.ErrorCost / float64(t.N)
			c.TotalPerCase = c.PerCase + c.ErrorsPerCase
		}
		rep.Targets = append(rep.Targets, t)
		passByTarget[name] = a.pass
	}
	rep.Calls = calls.report(names, rep.Targets, ci, view.Epochs, accFields(accs), o)
	if err := worst.fillExpected(ctx, st, run.ID); err != nil {
		return nil, err
	}
	rep.Worst = worst.list()
	rep.FailureCount = worst.next
	unpairedWarning := ""
	if len(rep.Targets) > 0 && rep.Targets[0].Primary.Scorer != "" {
		rep.Comparisons = comparePairs(names, passByTarget, ci, rep.Targets[0].Primary.Scorer, o)
		if len(names) > 1 && unpairedComparisons(rep.Comparisons) == len(rep.Comparisons) {
			// No two targets answered one case (a score-traces run: each
			// model its own traces): a paired test has nothing to decide,
			// and a ranking of ties would say they were compared.
			unpairedWarning = "no two targets answered the same case, so they are not compared and not ranked: their rates are of different cases (compare them with intervals, or run them on the same cases)"
		} else {
			rep.Ranking = rank(names, rep.Comparisons)
		}
	}
	rep.Pareto = pareto(rep.Targets)
	if err := addClasses(ctx, st, run, scoring, rep, o.Alpha); err != nil {
		return nil, err
	}
	if err := addPairwise(ctx, st, run, scoring, rep, o.Alpha); err != nil {
		return nil, err
	}
	rep.Spec = json.RawMessage(run.Config)
	rep.Warnings = append(coverageWarnings(run, ci), sliceWarnings(rep.Comparisons, o.Alpha, o.Margin)...)
	if unpairedWarning != "" {
		rep.Warnings = append(rep.Warnings, unpairedWarning)
	}
	rep.Warnings = append(rep.Warnings, unfinishedWarnings(run)...)
	rep.Warnings = append(rep.Warnings, partialWarnings(run, rep.Targets)...)
	rep.Warnings = append(rep.Warnings, clusterWarnings(rep.Comparisons)...)
	rep.Warnings = append(rep.Warnings, judgeWarnings(rep.Targets)...)
	rep.Warnings = append(rep.Warnings, errWarnings...)
	rep.Warnings = append(rep.Warnings, hostWarnings(run)...)
	rep.Warnings = append(rep.Warnings, rateLimitWarnings(run, rep.Targets)...)
	if run.Experiment != "" && !o.NoLedger {
		if rep.Ledger, err = selectionLedger(ctx, st, run, rep, passByTarget, ci, o); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// sliceCounts counts a target's verdicts per tag value: passed and n for
// each key and value of the case index (the view's tag columns).
func sliceCounts(vs *verdicts, ci *caseIndex) [][][2]int {
	out := make([][][2]int, len(ci.keys))
	for k := range ci.keys {
		out[k] = make([][2]int, len(ci.vals[k]))
		for j, x := range vs.v {
			if x < 0 {
				continue
			}
			if v := ci.tag(k, j/vs.epochs); v >= 0 {
				out[k][v][1]++
				out[k][v][0] += int(x)
			}
		}
	}
	return out
}

// rate is passed out of n with the interval method names (a
// stats.ProportionMethods name; Wilson when it is not one).
func rate(name string, passed, n int, alpha float64, method string) Rate {
	r := Rate{Scorer: name, Passed: passed, N: n}
	if n > 0 {
		r.Rate = float64(passed) / float64(n)
	}
	ci := stats.Wilson(passed, n, alpha)
	if method != "" && method != stats.MethodWilson {
		// Named only when not the default, as a slice's rate is.
		if m, err := stats.ProportionCI(method, passed, n, alpha); err == nil {
			ci, r.CIMethod = m, method
		}
	}
	r.CI = [2]float64{round4(ci.Lo), round4(ci.Hi)}
	return r
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// quantile is stats.Quantile (the gate's and the charts' too) of a view's
// column, 0 for no values. It sorts xs in place: the latency samples are
// kept sorted.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	return stats.QuantileSorted(xs, q)
}

func runInfo(run *record.Run, scoring int) RunInfo {
	ri := RunInfo{
		ID: run.ID, Spec: run.Spec, SpecHash: run.SpecHash, DatasetHash: run.DatasetHash, FileHash: run.FileHash,
		PromptHash: run.PromptHash, GitCommit: run.GitCommit, ScorersHash: run.ScorersHash,
		AssayVersion: run.AssayVersion, Experiment: run.Experiment, Cases: run.Cases, Epochs: run.Epochs,
		Status: run.Status, Scoring: scoring, Started: run.Started.UTC().Format("2006-01-02T15:04:05Z"),
	}
	if !run.Ended.IsZero() {
		ri.Ended = run.Ended.UTC().Format("2006-01-02T15:04:05Z")
	}
	return ri
}
