// Package selftest owns `assay selftest`: it attacks a spec's own parser and
// scorers with null models — outputs that know nothing of the right answer
// (empty, {}, the prompt echoed, a refusal, the most common answer, another
// case's answer, a megabyte of prose, text aimed at a judge ...) — and
// reports, per scorer, each null model's pass rate with its interval against
// the rate a correct grader would give it (its chance rate). A headline
// scorer that passes a null model clearly above chance makes the spec
// exploitable.
//
// Each null model runs twice: raw (its text goes through the spec's output
// parser and then the scorers, exactly as in a run, through scorer.Set) and
// parsed (its value is handed to the scorers as the already-parsed output,
// so a scorer that accepts anything is caught even when the parser rejects
// junk).
//
// It calls no candidate model. Judge scorers call the provider the caller
// hands in (a mock or the configured grader), or are skipped. It may import
// spec, dataset, prompt, task, scorer, stats, store (for its record types)
// and provider (for the Provider interface); it must not import the runner,
// a store or provider implementation, mock, analysis, report or cli. The
// Report it builds is plain data of its subpackage findings (aliased here
// under the same names), which report renders without importing selftest.
package selftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/selftest/findings"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
	"github.com/assay-eval/assay/internal/units"
)

// Modes of a null model (findings'; see there).
const (
	ModeRaw    = findings.ModeRaw
	ModeParsed = findings.ModeParsed
)

// Verdicts.
const (
	VerdictSound       = findings.VerdictSound
	VerdictExploitable = findings.VerdictExploitable
	VerdictIncomplete  = findings.VerdictIncomplete
)

// Severities of a finding.
const (
	SeverityExploitable = findings.SeverityExploitable
	SeverityWarning     = findings.SeverityWarning
	SeverityNote        = findings.SeverityNote
)

// Scorer roles: scorer's (TestRolesAreTheScorers holds findings' equal to
// them) and a combined score's.
const (
	RoleCorrectness = findings.RoleCorrectness
	RoleForm        = findings.RoleForm
	RoleCall        = findings.RoleCall
	RoleCombined    = findings.RoleCombined
)

// Options adjust Run.
type Options struct {
	// Limit, when > 0, attacks only the first Limit cases (and never more
	// than the spec's dataset.limit).
	Limit int
	// Examples is how many example cases each flagged cell keeps.
	Examples int
	// Seed draws the shuffled model's derangement.
	Seed int64
	// Workers scores cases in parallel (default GOMAXPROCS, at least 16
	// when judges are called).
	Workers int
	// JudgeProvider reaches the grader of a judge scorer (see
	// scorer.Options.JudgeProvider). When nil, judge scorers are skipped.
	JudgeProvider func(target string) (provider.Provider, spec.Target, error)
	// JudgeVia names where JudgeProvider leads, for the report: skip, mock
	// or target.
	JudgeVia string
	// Skip names null models not to run, each with the reason the report
	// gives (e.g. the long model is not sent to a paid grader).
	Skip map[string]string
}

// readsRawText reports whether a scorer type judges something other than
// the parsed output — the raw text, or the call's latency or cost
// (scorer.Meta): for it, parsed mode is raw mode.
func readsRawText(typ string) bool {
	m, ok := scorer.Meta(typ)
	return ok && m.Reads != scorer.ReadsParsed
}

// roleOf classifies a scorer type (scorer.Meta): scorers of correctness
// compare the answer with the case's; checks of form (shape, length,
// banned words) and of the call (latency, cost) may rightly pass junk.
func roleOf(typ string) string {
	m, ok := scorer.Meta(typ)
	if !ok {
		return RoleForm
	}
	return string(m.Role)
}

// isJudge reports whether a scorer type calls a model to grade.
func isJudge(typ string) bool {
	m, ok := scorer.Meta(typ)
	return ok && m.Judge
}

type cellKey struct {
	null  string
	mode  string
	score string
}

type cell struct {
	passed, n int
	examples  []example
}

type chanceTally struct{ hits, n int }

// chanceKey names a field scorer's chance tally for a null model (a null
// model's own, over whole answers, is keyed by its name alone).
func chanceKey(null, scorerName string) string { return null + "\x00" + scorerName }

// tally is one worker's counts.
type tally struct {
	cells     map[cellKey]*cell
	chance    map[string]*chanceTally
	judgeCost float64
}

func newTally() *tally {
	return &tally{cells: map[cellKey]*cell{}, chance: map[string]*chanceTally{}}
}

// scorerInfo is what Run knows about one score name.
type scorerInfo struct {
	name, typ  string
	primary    bool
	headline   bool
	readsRaw   bool
	skipped    string
	note       string
	judge      bool
	combinedOf []string
	// project, for a field scorer, is the part of an answer it compares:
	// its chance rate is computed on that part (nil: the whole answer).
	project scorer.Projection
	// callChance, for a scorer of tool calls, is a correct grader of calls
	// (scorer.CallChance): its chance rate is reckoned with it.
	callChance func(calls []record.ToolCall, expected any) bool
}

// Run attacks t's scorers with every null model and reports the findings.
// The task must have loaded without problems.
func Run(ctx context.Context, t *task.Task, o Options) (*Report, error) {
	if t == nil || t.Spec == nil || t.Prompt == nil || t.Scorers == nil {
		return nil, errors.New("selftest: the task did not load")
	}
	sp := t.Spec
	if o.Examples < 0 {
		o.Examples = 0
	}
	if o.JudgeVia == "" {
		o.JudgeVia = "skip"
		if o.JudgeProvider != nil {
			o.JudgeVia = "target"
		}
	}
	var judgeRequests atomic.Int64
	jp := o.JudgeProvider
	if jp != nil {
		// Count the grader's calls: the report says what the attack cost.
		inner := jp
		jp = func(name string) (provider.Provider, spec.Target, error) {
			p, tg, err := inner(name)
			if p == nil || err != nil {
				return p, tg, err
			}
			return provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
				judgeRequests.Add(1)
				return p.Complete(ctx, req)
			}), tg, nil
		}
	}
	// One compiled set serves both modes: raw goes through the spec's
	// parser (Score), parsed hands the value over past it (ScoreParsed).
	set, probs := scorer.CompileWith(sp, scorer.Options{JudgeProvider: jp})
	if len(probs) > 0 {
		return nil, probs
	}

	// The cases a run of this spec uses, up to --limit.
	dsSpec := *sp
	if o.Limit > 0 && (dsSpec.Dataset.Limit <= 0 || o.Limit < dsSpec.Dataset.Limit) {
		dsSpec.Dataset.Limit = o.Limit
	}
	st, err := collectStats(&dsSpec, o.Seed)
	if err != nil {
		return nil, err
	}
	st.promptFields = t.Prompt.Fields()
	st.dress = newDresser(set.Parser(), sp.Output.Extract)
	st.long = longText(LongBytes)
	st.spray = sprayText(sprayMax)
	st.longStride = max(1, (st.N+longCases-1)/longCases)
	var labelValues []string
	for _, sc := range sp.Scorers {
		if m, ok := scorer.Meta(sc.Type); ok && m.Labels {
			if sc.Value != "" {
				labelValues = append(labelValues, sc.Value)
			}
			labelValues = append(labelValues, sc.Values...)
		}
	}
	st.Labels = labelSet(labelValues, st)
	st.calls = newToolStats(sp)

	infos := scorerInfos(sp, set, o.JudgeProvider == nil)
	models := NullModels()
	rep := &Report{
		Spec:     sp.Name,
		SpecPath: sp.File,
		SpecHash: sp.Hash,
		Cases:    st.N,
		Seed:     o.Seed,
		JudgeVia: o.JudgeVia,
		Headline: set.Headline(),
		Findings: []Finding{},
		Rule: Rule{Method: "wilson", Confidence: Confidence, Adjustment: "bonferroni", Margin: Margin,
			Text: fmt.Sprintf("a null model is clearly above chance when the lower end of its Wilson interval (simultaneous %s over the scorer's null-model × mode cells, Bonferroni) exceeds its chance rate + %s", units.PctShort(Confidence), units.Points(Margin))},
	}
	if t.Dataset != nil {
		rep.DatasetHash = t.Dataset.Hash
	}
	var active []NullModel
	for _, m := range models {
		if !st.calls.listed(m.Name) {
			continue // a tool null model, and the spec is not about tools
		}
		ok, why := st.applies(m.Name)
		if reason, skip := o.Skip[m.Name]; skip && ok {
			ok, why = false, reason
		}
		info := NullModelInfo{Name: m.Name, About: m.About, Basis: m.chanceBasis()}
		if !ok {
			info.Skipped = why
		} else {
			active = append(active, m)
		}
		rep.NullModels = append(rep.NullModels, info)
	}

	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
		if o.JudgeProvider != nil && len(set.JudgeTargets()) > 0 {
			workers = max(workers, 16)
		}
	}
	tallies, err := score(ctx, t, &dsSpec, set, st, active, infos, o.Examples, workers)
	if err != nil {
		return nil, err
	}
	total := merge(tallies, o.Examples)
	rep.JudgeRequests, rep.JudgeCost = int(judgeRequests.Load()), total.judgeCost
	build(rep, total, infos, active, set.Combine())
	return rep, nil
}

// collectStats reads the expected values (the first pass over the data).
func collectStats(sp *spec.Spec, seed int64) (*Stats, error) {
	st := &Stats{}
	err := dataset.Each(sp, func(c *dataset.Case) error {
		k, ok := answerKey(c.Expected)
		st.expected = append(st.expected, c.Expected)
		st.keys = append(st.keys, k)
		st.has = append(st.has, ok)
		st.shouldRefuse = append(st.shouldRefuse, c.Tags[scorer.BucketTag] == scorer.BucketShouldRefuse)
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.N = len(st.expected)
	if i, n := mode(st.keys, st.has); i >= 0 {
		st.Mode, st.ModeKey, st.ModeCount, st.ModeOK = st.expected[i], st.keys[i], n, true
	}
	var pool []int
	for i, ok := range st.has {
		if ok {
			pool = append(pool, i)
		}
	}
	st.perm = derangement(st.N, pool, seed)
	return st, nil
}

// scorerInfos describes every score name the raw set makes.
func scorerInfos(sp *spec.Spec, set *scorer.Set, skipJudges bool) []*scorerInfo {
	types := map[string]string{}
	projections := map[string]scorer.Projection{}
	callChances := map[string]func([]record.ToolCall, any) bool{}
	for i, sc := range sp.Scorers {
		name := sc.Name
		if name == "" {
			name = sc.Type
		}
		types[name] = sc.Type
		projections[name] = scorer.ProjectionOf(&sp.Scorers[i])
		callChances[name] = scorer.CallChance(&sp.Scorers[i])
	}
	primaries := set.Primary()
	pairwise := set.Pairwise()
	var out []*scorerInfo
	for _, name := range set.Names() {
		si := &scorerInfo{name: name, typ: types[name], primary: slices.Contains(primaries, name), headline: name == set.Headline()}
		si.readsRaw = readsRawText(si.typ)
		si.judge = isJudge(si.typ)
		si.project = projections[name]
		si.callChance = callChances[name]
		switch {
		case name == scorer.CombinedName && len(primaries) > 1:
			si.typ = "combined"
			si.combinedOf = primaries
			judgeSkipped := false
			for _, p := range primaries {
				if readsRawText(types[p]) {
					si.readsRaw = true
				}
				if isJudge(types[p]) && skipJudges {
					judgeSkipped = true
				}
			}
			if judgeSkipped {
				if set.Combine() == "any" {
					si.note = "a judge among the primary scorers was skipped and counts as failing, so these rates are lower bounds"
				} else {
					si.skipped = "a judge among the primary scorers (combined with all) was skipped; use --judge-via mock or target"
				}
			}
		case slices.Contains(pairwise, name):
			si.skipped = "a pairwise judge compares two targets' outputs; selftest attacks scorers of single outputs"
		case si.judge && skipJudges:
			si.skipped = "judge scorers call a model; skipped (use --judge-via mock for a gullible stand-in, or --judge-via target to attack the configured grader)"
		}
		out = append(out, si)
	}
	// The headline first, then the other primaries, then the rest, each in
	// spec order.
	sort.SliceStable(out, func(a, b int) bool {
		rank := func(s *scorerInfo) int {
			switch {
			case s.headline:
				return 0
			case s.primary:
				return 1
			}
			return 2
		}
		return rank(out[a]) < rank(out[b])
	})
	return out
}

type job struct {
	c     *dataset.Case
	index int
}

// score streams the cases (the second pass) to the workers.
func score(ctx context.Context, t *task.Task, sp *spec.Spec, set *scorer.Set, st *Stats, models []NullModel, infos []*scorerInfo, examples, workers int) ([]*tally, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan job, workers*2)
	tallies := make([]*tally, workers)
	var wg sync.WaitGroup
	for w := range workers {
		tl := newTally()
		tallies[w] = tl
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				scoreCase(ctx, t, set, st, models, infos, examples, j, tl)
			}
		}()
	}
	i := 0
	err := dataset.Each(sp, func(c *dataset.Case) error {
		if i >= st.N {
			return nil
		}
		select {
		case jobs <- job{c, i}:
		case <-ctx.Done():
			return ctx.Err()
		}
		i++
		return nil
	})
	close(jobs)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return tallies, nil
}

// scoreCase runs every null model on one case, raw and parsed.
func scoreCase(ctx context.Context, t *task.Task, set *scorer.Set, st *Stats, models []NullModel, infos []*scorerInfo, examples int, j job, tl *tally) {
	in := &nullInput{c: j.c, index: j.index, st: st}
	promptErr := ""
	if msgs, err := t.Prompt.Render(j.c.Vars); err != nil {
		promptErr = err.Error()
	} else {
		parts := make([]string, len(msgs))
		for k, m := range msgs {
			parts[k] = m.Content
		}
		in.prompt = strings.Join(parts, "\n\n")
	}
	expKey, hasExp := st.keys[j.index], st.has[j.index]
	for _, m := range models {
		if !st.runsOn(m.Name, j.index) {
			continue
		}
		out := m.make(in)
		out.PromptError = promptErr

		// The chance rate: would a correct grader pass this answer here?
		ct := tl.chance[m.Name]
		if ct == nil {
			ct = &chanceTally{}
			tl.chance[m.Name] = ct
		}
		ct.n++
		if m.Name != NullLong {
			vk, vok := answerKey(out.Value)
			if chanceHit(vk, vok, expKey, hasExp, m.Name == NullRefusal, st.shouldRefuse[j.index]) {
				ct.hits++
			}
		}
		// A field scorer's own chance rate: the answer is right when the
		// fields it compares are the expected ones.
		for _, si := range infos {
			if si.callChance != nil {
				// A scorer of tool calls: would a correct grader pass these
				// calls here?
				key := chanceKey(m.Name, si.name)
				ct := tl.chance[key]
				if ct == nil {
					ct = &chanceTally{}
					tl.chance[key] = ct
				}
				ct.n++
				if si.callChance(out.ToolCalls, j.c.Expected) {
					ct.hits++
				}
				continue
			}
			if si.project == nil {
				continue
			}
			key := chanceKey(m.Name, si.name)
			ct := tl.chance[key]
			if ct == nil {
				ct = &chanceTally{}
				tl.chance[key] = ct
			}
			ct.n++
			if m.Name == NullLong {
				continue
			}
			pv, pok := si.project(out.Value, false)
			pe, eok := si.project(j.c.Expected, true)
			vk, vok := answerKey(pv)
			ek, ekok := answerKey(pe)
			if chanceHit(vk, vok && pok, ek, hasExp && eok && ekok, m.Name == NullRefusal, st.shouldRefuse[j.index]) {
				ct.hits++
			}
		}

		// Raw: the output through the spec's parser, as in a run.
		tl.record(ctx, set, j, m.Name, ModeRaw, out.Raw, promptErr, out.ToolCalls, infos, nil, examples)

		// Parsed: the value handed to the scorers as the parsed output.
		value := out.Value
		tl.record(ctx, set, j, m.Name, ModeParsed, valueText(value), promptErr, out.ToolCalls, infos, &value, examples)
	}
}

// record scores one null output and counts it: raw through the spec's
// parser, or, when parsed is given, that value handed to the scorers as the
// parsed output (raw is then its text, for the fail-closed gates); calls are
// the tool calls it makes.
func (tl *tally) record(ctx context.Context, set *scorer.Set, j job, null, mode, raw, promptErr string, calls []record.ToolCall, infos []*scorerInfo, parsed *any, examples int) {
	r := record.Result{
		RunID:        "selftest",
		CaseID:       j.c.ID,
		Target:       "null:" + null,
		Epoch:        1,
		Raw:          raw,
		FinishReason: "stop",
		Attempts:     1,
		ToolCalls:    calls,
	}
	if promptErr != "" {
		r.Raw = ""
		r.ErrorKind = "prompt_error"
		r.Error = promptErr
	}
	var scores []record.Score
	if parsed != nil {
		scores = set.ScoreParsed(ctx, j.c, &r, *parsed)
	} else {
		scores = set.Score(ctx, j.c, &r)
	}
	for _, s := range scores {
		if s.JudgeCost > 0 {
			tl.judgeCost += s.JudgeCost
		}
		si := findInfo(infos, s.Scorer)
		if si == nil || si.skipped != "" {
			continue
		}
		if mode == ModeParsed && si.readsRaw && si.typ != "combined" {
			continue
		}
		k := cellKey{null, mode, s.Scorer}
		c := tl.cells[k]
		if c == nil {
			c = &cell{}
			tl.cells[k] = c
		}
		c.n++
		if !s.Pass {
			continue
		}
		c.passed++
		if len(c.examples) < examples {
			c.examples = append(c.examples, example{Example{
				CaseID: j.c.ID,
				Output: clipOutput(withCalls(raw, calls)),
				Parsed: clipText(parsedText(r.Parsed), 200),
				Reason: clipText(s.Reason, 300),
			}, j.index})
		}
	}
}

func findInfo(infos []*scorerInfo, name string) *scorerInfo {
	for _, si := range infos {
		if si.name == name {
			return si
		}
	}
	return nil
}

// merge adds the workers' tallies; examples keep the lowest case indexes,
// so they do not depend on scheduling.
func merge(tallies []*tally, examples int) *tally {
	total := newTally()
	for _, tl := range tallies {
		total.judgeCost += tl.judgeCost
		for k, c := range tl.cells {
			tc := total.cells[k]
			if tc == nil {
				tc = &cell{}
				total.cells[k] = tc
			}
			tc.passed += c.passed
			tc.n += c.n
			tc.examples = append(tc.examples, c.examples...)
		}
		for name, ct := range tl.chance {
			tc := total.chance[name]
			if tc == nil {
				tc = &chanceTally{}
				total.chance[name] = tc
			}
			tc.hits += ct.hits
			tc.n += ct.n
		}
	}
	for _, c := range total.cells {
		sort.Slice(c.examples, func(a, b int) bool { return c.examples[a].index < c.examples[b].index })
		if len(c.examples) > examples {
			c.examples = c.examples[:examples]
		}
	}
	return total
}

// parsedText shows a stored parsed value (JSON): a string as itself,
// anything else as its JSON.
func parsedText(js string) string {
	var s string
	if err := json.Unmarshal([]byte(js), &s); err == nil {
		return s
	}
	return js
}

// clipText shortens s to n runes, marking the cut.
func clipText(s string, n int) string {
	// Only the first n runes are read: a null model's output can be
	// megabytes long.
	runes := 0
	for i := range s {
		if runes == n {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		runes++
	}
	return s
}

// clipOutput clips an output for an example, saying how long it was.
func clipOutput(s string) string {
	if len(s) <= 200 {
		return s
	}
	return fmt.Sprintf("%s (%d bytes)", clipText(s, 160), len(s))
}
