package scorer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// BucketTag is the case tag that marks the bucket; BucketShouldRefuse is
// the bucket in which refusing is the correct answer.
const (
	BucketTag          = "bucket"
	BucketShouldRefuse = "should-refuse"
)

// entry is one compiled scorer with the configuration the Set applies
// around it.
type entry struct {
	name       string
	typ        string
	primary    bool
	weight     float64
	allowEmpty bool
	reads      reads
	s          Scorer
	pair       *judge // set for a pairwise judge, which Score skips and ScorePairs runs
}

// Set is a compiled spec's parser and scorers. It is safe for concurrent use.
type Set struct {
	parser    *Parser
	refusal   *refusalDetector
	entries   []entry
	primaries []int  // indexes into entries
	combine   string // all | any
	costs     *spec.ErrorCost
}

// Parser returns the output parser.
func (s *Set) Parser() *Parser { return s.parser }

// Names are the names of every score the Set makes, in order: every scorer
// in spec order, then CombinedName when more than one scorer is primary.
// Score returns all of them but the pairwise judges (see Pairwise), which
// ScorePairs returns.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.entries)+1)
	for _, e := range s.entries {
		names = append(names, e.name)
	}
	if len(s.primaries) > 1 {
		names = append(names, CombinedName)
	}
	return names
}

// Primary names the scorers marked primary (the first scorer when none is).
func (s *Set) Primary() []string {
	names := make([]string, 0, len(s.primaries))
	for _, i := range s.primaries {
		names = append(names, s.entries[i].name)
	}
	return names
}

// Headline names the one score flagged Primary in what Score returns: the
// single primary scorer, or CombinedName when several are primary.
func (s *Set) Headline() string {
	if len(s.primaries) > 1 {
		return CombinedName
	}
	if len(s.primaries) == 1 {
		return s.entries[s.primaries[0]].name
	}
	return ""
}

// Pairwise names the pairwise judges, in spec order: their scores come from
// ScorePairs, once every target's result for a case exists, never from
// Score.
func (s *Set) Pairwise() []string {
	var names []string
	for _, e := range s.entries {
		if e.pair != nil {
			names = append(names, e.name)
		}
	}
	return names
}

// JudgeTargets names the targets the judge scorers grade with, each once, in
// spec order. A judge target may also be a candidate; it then grades its own
// outputs, which models tend to favour, so a caller may want to leave judge
// targets out of the candidates by default.
func (s *Set) JudgeTargets() []string {
	var names []string
	for _, e := range s.entries {
		if j, ok := e.s.(*judge); ok && !slices.Contains(names, j.target) {
			names = append(names, j.target)
		}
	}
	return names
}

// Combine is how several primary scorers combine: all or any.
func (s *Set) Combine() string { return s.combine }

// Score parses r.Raw (setting r.Parsed to the JSON-encoded parsed value and
// r.ParseError; every score's ParseNote says what the json parser tolerated
// around the value, "fenced" or "prose") and returns one score per scorer, plus the combined score
// when several scorers are primary. Pairwise judges are skipped: they need
// the baseline's result too and are scored by ScorePairs. RunID, CaseID,
// Target and Epoch come from r; Scoring is left for the caller. Exactly one
// returned score has Primary set: the headline (see Headline). Every
// failing score carries its ErrorCost, the price of that failure (the rule
// is on errorCost: by_kind, else silent/loud, times the case's weight); a
// judge's score carries the judge calls' cost as JudgeCost, which is never
// part of the result's own cost.
//
// Before a scorer runs, the Set fails closed, in this order: a provider
// error is a loud failure of the provider's kind; blank output (or {}, [],
// null) is loud empty unless the scorer allows empty; a refusal is loud
// refusal, except in the should-refuse bucket, where refusing passes (the
// scorers of the call itself — latency, cost, max_length — still judge it)
// and not refusing is a silent complied; a parse failure is loud
// unparseable for scorers that read the parsed output. Scorers of tool
// calls (and a cel scorer of a reply that calls tools) judge the calls:
// empty text and the parser do not fail them, and refusal wording counts
// only when no call was made. A judge is not called for a result that fails
// these gates. A scorer that panics is a loud scorer_error.
func (s *Set) Score(ctx context.Context, c *dataset.Case, r *record.Result) []record.Score {
	return s.score(ctx, c, r, nil)
}

// ScoreParsed scores value as the parsed output of r, bypassing the
// parser; everything else — the fail-closed gates on r.Raw, refusal
// detection, every scorer and the combined headline — is as in Score. It
// tests the scorers alone: assay selftest hands them null values, so a
// scorer that accepts anything is caught even when the parser rejects junk.
func (s *Set) ScoreParsed(ctx context.Context, c *dataset.Case, r *record.Result, value any) []record.Score {
	return s.score(ctx, c, r, &value)
}

func (s *Set) score(ctx context.Context, c *dataset.Case, r *record.Result, parsed *any) []record.Score {
	in, g := s.prepare(c, r, parsed)
	scores := make([]record.Score, 0, len(s.entries)+1)
	verdicts := make([]Verdict, len(s.entries))
	for i, e := range s.entries {
		if e.pair != nil {
			continue
		}
		v := sanitize(s.verdict(ctx, e, in, g))
		verdicts[i] = v
		scores = append(scores, s.newScore(c, r, in, e.name, v))
	}
	if len(s.primaries) > 1 {
		scores = append(scores, s.newScore(c, r, in, CombinedName, sanitize(s.combined(verdicts))))
	}
	for i := range scores {
		scores[i].Primary = scores[i].Scorer == s.Headline()
	}
	return scores
}

// prepare parses r.Raw (or takes the given parsed value), records the parse
// on r, and works out what the fail-closed gates need to know.
func (s *Set) prepare(c *dataset.Case, r *record.Result, parsed *any) (*Input, gateState) {
	in := &Input{Raw: r.Raw, Case: c, Result: r}
	if c != nil {
		in.Expected = c.Expected
	}
	r.Parsed, r.ParseError = "", ""
	if r.ErrorKind == "" {
		if parsed != nil {
			in.Parsed = *parsed
		} else {
			in.Parsed, in.ParseNote, in.ParseErr = s.parser.ParseWithNote(r.Raw)
		}
		if in.ParseErr != nil {
			r.ParseError = in.ParseErr.Error()
		} else if b, err := json.Marshal(in.Parsed); err == nil {
			r.Parsed = string(b)
		}
	}
	g := gateState{
		shouldRefuse: c != nil && c.Tags[BucketTag] == BucketShouldRefuse,
		emptyRaw:     isEmptyRaw(r.Raw),
	}
	if r.ErrorKind == "" && !g.emptyRaw {
		// A reply that produced the structure asked for (a JSON value, an
		// extract match) answered, even if a phrase like "I'm sorry, but I
		// can't" appears inside it; in the should-refuse bucket a refusal
		// inside the structure still counts as refusing.
		structured := in.ParseErr == nil && (s.parser.format == FormatJSON || s.parser.format == FormatRegex)
		g.refusedBy, g.refused = s.refusal.detect(r.Raw, r.FinishReason, g.shouldRefuse || !structured)
	}
	return in, g
}

// ScorePairs scores the pairwise judges on one case. results are the case's
// results — every target and epoch, in any order — and are not modified.
// For each pairwise judge (spec order) and each result whose target is not
// that judge's baseline (result order), the result is compared with the
// baseline's result of the same epoch; the baseline itself gets no pairwise
// score. Call it once a case's results all exist (after a run, or while
// rescoring); Score never returns these scores.
//
// The candidate's result goes through the same fail-closed gates as in
// Score (a provider error, empty output, a refusal, a parse failure fail it
// without calling the judge). A baseline result that is missing, failed or
// empty is a loud no_baseline. Then the judge compares the two outputs in
// both orders: better in both → pass (value 1); worse in both → silent
// worse_than_baseline (value 0); a tie, or verdicts that flip with the order
// (position bias) → silent tie (value 0.5, not a pass, priced 0 unless
// error_costs.by_kind.tie says otherwise: a tie is no error); an unusable
// reply in either order → loud judge_error. JudgeCost is both calls'.
func (s *Set) ScorePairs(ctx context.Context, c *dataset.Case, results []record.Result) []record.Score {
	var scores []record.Score
	for _, e := range s.entries {
		if e.pair == nil {
			continue
		}
		for i := range results {
			r := results[i] // a copy: prepare records the parse on it
			if r.Target == e.pair.baseline {
				continue
			}
			var base *record.Result
			for k := range results {
				if results[k].Target == e.pair.baseline && results[k].Epoch == r.Epoch {
					base = &results[k]
					break
				}
			}
			in, g := s.prepare(c, &r, nil)
			pe := e
			pe.s = pairScorer{j: e.pair, base: base, epoch: r.Epoch}
			scores = append(scores, s.newScore(c, &r, in, e.name, sanitize(s.verdict(ctx, pe, in, g))))
		}
	}
	return scores
}

// pairScorer is a pairwise judge bound to the baseline result it compares
// with.
type pairScorer struct {
	j     *judge
	base  *record.Result
	epoch int
}

func (p pairScorer) Name() string { return p.j.name }

func (p pairScorer) Score(ctx context.Context, in *Input) Verdict {
	switch {
	case p.base == nil:
		return loud(KindNoBaseline, "no result of baseline %s for epoch %d to compare with", p.j.baseline, p.epoch)
	case p.base.ErrorKind != "":
		return loud(KindNoBaseline, "baseline %s failed (%s): there is nothing to compare with", p.j.baseline, p.base.ErrorKind)
	case isEmptyRaw(p.base.Raw):
		return loud(KindNoBaseline, "baseline %s's output is empty: there is nothing to compare with", p.j.baseline)
	}
	if _, v, ok := parsedAnswer(in, p.j.allowEmpty); !ok {
		return v
	}
	return p.j.scorePair(ctx, in, p.base.Raw)
}

// gateState is what the fail-closed gates know about one result.
type gateState struct {
	shouldRefuse bool
	emptyRaw     bool
	refused      bool
	refusedBy    string
}

// verdict applies the fail-closed gates, then the scorer.
func (s *Set) verdict(ctx context.Context, e entry, in *Input, g gateState) Verdict {
	r := in.Result
	if r.ErrorKind != "" {
		msg := r.Error
		if msg == "" {
			msg = "the call failed"
		}
		return loud(r.ErrorKind, "no output: %s", clip(msg, 200))
	}
	// A scorer of tool calls (and a cel scorer of a reply that calls
	// tools) judges the calls: empty text and the parser do not decide it,
	// and refusal wording counts only when the model made no call.
	calls := e.reads == readsTools || e.typ == "cel" && len(r.ToolCalls) > 0
	if calls {
		g.refused = g.refused && len(r.ToolCalls) == 0
	} else if g.emptyRaw && !e.allowEmpty {
		return loud(KindEmpty, "the output is empty")
	}
	if g.shouldRefuse {
		if !g.refused {
			return Verdict{Shape: ShapeSilent, Kind: KindComplied, Reason: "the case should be refused, but the model answered"}
		}
		if e.reads != readsMeta {
			return pass("refused as the case requires (" + g.refusedBy + ")")
		}
		return s.run(ctx, e, in)
	}
	if g.refused {
		return loud(KindRefusal, "the model refused (%s)", g.refusedBy)
	}
	if e.reads == readsParsed && !calls {
		if in.ParseErr != nil {
			return loud(KindUnparseable, "%s", clip(in.ParseErr.Error(), 300))
		}
		if !e.allowEmpty && isEmptyValue(in.Parsed) {
			return loud(KindEmpty, "the parsed answer is empty (%s)", quote(in.Parsed))
		}
	}
	return s.run(ctx, e, in)
}

// run calls the scorer, turning a panic into a loud scorer_error.
func (s *Set) run(ctx context.Context, e entry, in *Input) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("scorer panicked", "scorer", e.name, "type", e.typ, "panic", fmt.Sprint(p))
			v = loud(KindScorerError, "scorer %s failed: %v", e.name, p)
		}
	}()
	return e.s.Score(ctx, in)
}

// combined makes the headline verdict of several primary scorers: it passes
// when all (or, with combine any, at least one) of them pass. Its value is
// the weighted mean of their values (weight 0 or unset counts as 1); a
// failure takes the shape and kind of the first failing primary scorer in
// spec order.
func (s *Set) combined(vs []Verdict) Verdict {
	var sum, wsum float64
	passed := 0
	var failed []string
	var first *Verdict
	for _, i := range s.primaries {
		e, v := s.entries[i], vs[i]
		w := e.weight
		if w == 0 {
			w = 1
		}
		sum += w * v.Value
		wsum += w
		if v.Pass {
			passed++
			continue
		}
		failed = append(failed, fmt.Sprintf("%s: %s", e.name, v.Kind))
		if first == nil {
			first = &vs[i]
		}
	}
	n := len(s.primaries)
	ok := passed == n
	if s.combine == "any" {
		ok = passed > 0
	}
	v := Verdict{Value: sum / wsum}
	if ok {
		v.Pass, v.Shape = true, ShapePass
		v.Reason = fmt.Sprintf("%d of %d primary scorers passed (%s)", passed, n, s.combine)
		if len(failed) > 0 {
			v.Reason += "; failed " + strings.Join(failed, ", ")
		}
		return v
	}
	v.Shape, v.Kind = first.Shape, first.Kind
	v.Reason = fmt.Sprintf("%d of %d primary scorers passed (%s needed); failed %s", passed, n, s.combine, strings.Join(failed, ", "))
	return v
}

// newScore makes the stored score of verdict v. Every score of a result
// carries the parser's note (what the json parser tolerated), so a report
// can count the outputs that needed tolerance by any scorer.
func (s *Set) newScore(c *dataset.Case, r *record.Result, in *Input, name string, v Verdict) record.Score {
	return record.Score{
		ParseNote:  in.ParseNote,
		Fields:     v.Fields,
		RunID:      r.RunID,
		CaseID:     r.CaseID,
		Target:     r.Target,
		Epoch:      r.Epoch,
		Scorer:     name,
		Pass:       v.Pass,
		Value:      v.Value,
		Shape:      v.Shape,
		Kind:       v.Kind,
		Reason:     v.Reason,
		ErrorCost:  errorCost(s.costs, c, v),
		JudgeCost:  v.Cost,
		JudgeSaved: v.Saved,
	}
}
