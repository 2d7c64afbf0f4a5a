package scorer

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// reads says what part of a result a scorer judges; it decides which
// fail-closed gates apply before the scorer runs.
type reads int

const (
	readsParsed reads = iota // the parsed output: parse failures fail it
	readsRaw                 // the raw text: parse failures do not matter
	readsMeta                // the call (latency, cost, length): refusal does not decide it
)

// typeInfo describes one built-in scorer type.
type typeInfo struct {
	reads      reads
	params     []string // parameter keys the type takes besides the common ones
	allowEmpty bool     // allow_empty is meaningful
	build      func(b *builder, i int, sc *spec.Scorer) Scorer
}

// CombinedName is the name of the headline score made when several scorers
// are primary.
const CombinedName = "primary"

// Types are the scorer types a spec may name.
func Types() []string {
	ts := scorerTypes()
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func scorerTypes() map[string]typeInfo {
	return map[string]typeInfo{
		"equals":          {reads: readsParsed, params: []string{"normalize"}, allowEmpty: true, build: buildEquals},
		"contains":        {reads: readsRaw, params: []string{"value", "values", "normalize"}, build: buildContains},
		"not_contains":    {reads: readsRaw, params: []string{"value", "values", "normalize"}, allowEmpty: true, build: buildNotContains},
		"regex":           {reads: readsParsed, params: []string{"pattern"}, allowEmpty: true, build: buildRegex},
		"is_json":         {reads: readsRaw, build: buildIsJSON},
		"json_schema":     {reads: readsParsed, params: []string{"schema"}, allowEmpty: true, build: buildJSONSchema},
		"required_fields": {reads: readsParsed, params: []string{"fields"}, build: buildRequiredFields},
		"field_equals":    {reads: readsParsed, params: []string{"field", "fields", "normalize", "tolerance", "relative"}, build: buildFieldEquals},
		"number":          {reads: readsParsed, params: []string{"tolerance", "relative", "field"}, build: buildNumber},
		"similarity":      {reads: readsParsed, params: []string{"method", "threshold", "field", "normalize"}, build: buildSimilarity},
		"one_of":          {reads: readsParsed, params: []string{"values", "normalize"}, allowEmpty: true, build: buildOneOf},
		"max_length":      {reads: readsMeta, params: []string{"max"}, allowEmpty: true, build: buildMaxLength},
		"latency":         {reads: readsMeta, params: []string{"max"}, allowEmpty: true, build: buildLatency},
		"cost":            {reads: readsMeta, params: []string{"max"}, allowEmpty: true, build: buildCost},
		"cel":             {reads: readsParsed, params: []string{"expr"}, allowEmpty: true, build: buildCEL},
		"judge":           {reads: readsParsed, params: []string{"target", "rubric", "mode", "baseline", "reveal_target", "threshold"}, allowEmpty: true, build: buildJudge},
	}
}

// readsJSONPaths reports whether a scorer reads paths inside a JSON
// output, and so needs output.format json.
func readsJSONPaths(sc *spec.Scorer) bool {
	switch sc.Type {
	case "field_equals", "required_fields", "json_schema":
		return true
	case "number", "similarity":
		return sc.Field != ""
	}
	return false
}

// Options adjust Compile.
type Options struct {
	// JudgeProvider returns the provider a judge scorer calls for the judge
	// target named target, already wrapped like a candidate's (time-out,
	// limits, retries, response cache), and that target's spec (its model,
	// params and price: a judge call costs Price.Cost of its usage). It is
	// called once per judge scorer, while compiling.
	//
	// When nil (assay validate, say), judge scorers are still checked in
	// full, and every verdict they give is a loud judge_error "no judge
	// provider". When it returns an error, Compile reports no problem (the
	// error is the caller's to report, e.g. an API key not set) and that
	// judge's every verdict is a loud judge_error naming the error.
	JudgeProvider func(target string) (provider.Provider, spec.Target, error)
}

// Compile builds the parser from sp.Output and every scorer in sp.Scorers,
// checks the prices in sp.Errors (error_costs), and reports every misuse at
// once, each located at its spec path. The Set
// is nil when there are problems.
func Compile(sp *spec.Spec) (*Set, spec.Problems) {
	return CompileWith(sp, Options{})
}

// CompileWith is Compile with options.
func CompileWith(sp *spec.Spec, opts Options) (*Set, spec.Problems) {
	b := &builder{sp: sp, opts: opts}
	set := &Set{combine: "all"}

	p, err := NewStrictParser(sp.Output.Format, sp.Output.Extract, sp.Output.Strict)
	if err != nil {
		b.outputProblem(err)
	}
	set.parser = p

	det, probs := newRefusalDetector(sp)
	b.probs = append(b.probs, probs...)
	set.refusal = det
	b.refusal = det

	set.costs = sp.Errors
	b.checkErrorCosts()

	switch sp.Combine {
	case "", "all":
	case "any":
		set.combine = "any"
	default:
		b.probs = append(b.probs, sp.Problemf("combine", "combine is all or any", "unknown combine %q", sp.Combine))
	}

	if len(sp.Scorers) == 0 {
		b.probs = append(b.probs, sp.Problemf("scorers", "add at least one, e.g. {name: correct, type: equals, normalize: [trim]}", "no scorers: a run needs a definition of correct"))
	}
	types := scorerTypes()
	seen := map[string]int{}
	for i := range sp.Scorers {
		sc := &sp.Scorers[i]
		name := sc.Name
		if name == "" {
			name = sc.Type
		}
		if j, dup := seen[name]; dup {
			b.problemf(i, "name", "scorer names must be unique; add name: to one of them", "duplicate scorer name %q (also scorers[%d])", name, j)
		}
		seen[name] = i
		if sc.Weight < 0 {
			b.problemf(i, "weight", "weights are >= 0", "weight %v is negative", sc.Weight)
		}
		info, ok := types[sc.Type]
		if !ok {
			field, msg := "type", fmt.Sprintf("unknown scorer type %q", sc.Type)
			if sc.Type == "" {
				msg = "scorer has no type"
			}
			b.problemf(i, field, typeHint(sc.Type), "%s", msg)
			continue
		}
		b.checkParams(i, sc, info)
		if readsJSONPaths(sc) && p != nil && p.Format() != FormatJSON {
			at, what := "type", sc.Type
			if sc.Type == "number" || sc.Type == "similarity" {
				at, what = "field", sc.Type+" with field:"
			}
			b.problemf(i, at, "set output: {format: json}", "%s reads fields of a JSON output, but the output format is %s", what, p.Format())
		}
		named := *sc
		named.Name = name
		s := info.build(b, i, &named)
		if s == nil {
			continue
		}
		e := entry{
			name:       name,
			typ:        sc.Type,
			primary:    sc.Primary,
			weight:     sc.Weight,
			allowEmpty: sc.AllowEmpty,
			reads:      info.reads,
			s:          s,
		}
		if j, ok := s.(*judge); ok && j.mode == JudgePairwise {
			e.pair = j
		}
		set.entries = append(set.entries, e)
	}

	nPrimary := 0
	for i := range sp.Scorers {
		if sp.Scorers[i].Primary {
			nPrimary++
		}
	}
	if nPrimary > 1 {
		if j, ok := seen[CombinedName]; ok {
			b.problemf(j, "name", "rename it: with several primary scorers the combined score is called primary", "scorer name %q is reserved when more than one scorer is primary", CombinedName)
		}
	}
	if len(sp.Scorers) > 0 && !slices.ContainsFunc(sp.Scorers, func(sc spec.Scorer) bool { return sc.Type != "judge" || sc.Mode != JudgePairwise }) {
		b.probs = append(b.probs, sp.Problemf("scorers", "add a scorer of single results, e.g. {name: correct, type: equals}", "every scorer is a pairwise judge: the baseline target would have no score, and no scorer could be primary"))
	}
	if len(b.probs) > 0 {
		return nil, b.probs
	}
	if nPrimary == 0 {
		if i := slices.IndexFunc(set.entries, func(e entry) bool { return e.pair == nil }); i >= 0 {
			set.entries[i].primary = true
		}
	}
	for i, e := range set.entries {
		if e.primary {
			set.primaries = append(set.primaries, i)
		}
	}
	return set, nil
}

// builder collects problems while scorers compile.
type builder struct {
	sp      *spec.Spec
	opts    Options
	probs   spec.Problems
	refusal *refusalDetector
}

// problemf records a problem at scorers[i].field.
func (b *builder) problemf(i int, field, hint, format string, args ...any) {
	path := fmt.Sprintf("scorers[%d]", i)
	if field != "" {
		path += "." + field
	}
	b.probs = append(b.probs, b.sp.Problemf(path, hint, format, args...))
}

func (b *builder) outputProblem(err error) {
	switch {
	case strings.HasPrefix(err.Error(), "output.strict"):
		b.probs = append(b.probs, b.sp.Problemf("output.strict", "set output.format: json, or remove strict", "%v", err))
	case strings.HasPrefix(err.Error(), "unknown output format"):
		hint := "supported formats: " + strings.Join(Formats(), ", ")
		if n := nearest(b.sp.Output.Format, Formats()); n != "" {
			hint = fmt.Sprintf("did you mean %s? %s", n, hint)
		}
		b.probs = append(b.probs, b.sp.Problemf("output.format", hint, "%v", err))
	case b.sp.Output.Extract == "":
		b.probs = append(b.probs, b.sp.Problemf("output.format", `e.g. extract: 'A:\s*(.+)$'`, "%v", err))
	default:
		b.probs = append(b.probs, b.sp.Problemf("output.extract", "", "%v", err))
	}
}

// checkParams reports parameters that do not apply to the scorer's type and
// allow_empty where it has no meaning.
func (b *builder) checkParams(i int, sc *spec.Scorer, info typeInfo) {
	set := map[string]bool{
		"normalize":     len(sc.Normalize) > 0,
		"value":         sc.Value != "",
		"values":        len(sc.Values) > 0,
		"pattern":       sc.Pattern != "",
		"schema":        sc.Schema != nil,
		"fields":        len(sc.Fields) > 0,
		"field":         sc.Field != "",
		"tolerance":     sc.Tolerance != 0,
		"relative":      sc.Relative,
		"max":           sc.Max != nil,
		"expr":          sc.Expr != "",
		"target":        sc.Target != "",
		"rubric":        sc.Rubric != "",
		"mode":          sc.Mode != "",
		"baseline":      sc.Baseline != "",
		"threshold":     sc.Threshold != nil,
		"reveal_target": sc.RevealTarget,
		"method":        sc.Method != "",
	}
	allowed := map[string]bool{}
	for _, p := range info.params {
		allowed[p] = true
	}
	var keys []string
	for k, on := range set {
		if on && !allowed[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		hint := fmt.Sprintf("%s takes no parameters besides name, type, primary, weight", sc.Type)
		if len(info.params) > 0 {
			hint = fmt.Sprintf("%s takes %s", sc.Type, strings.Join(info.params, ", "))
		}
		b.problemf(i, k, hint, "%s does not apply to a %s scorer", k, sc.Type)
	}
	if sc.AllowEmpty && !info.allowEmpty {
		b.problemf(i, "allow_empty", "", "allow_empty has no meaning for a %s scorer: empty output can never satisfy it", sc.Type)
	}
}

// normalize compiles scorers[i].normalize, reporting unknown names.
func (b *builder) normalize(i int, sc *spec.Scorer) normChain {
	var chain normChain
	for j, name := range sc.Normalize {
		f, ok := lookupNormaliser(name)
		if ok {
			chain = append(chain, f)
			continue
		}
		hint := "supported normalisers: " + strings.Join(Normalisers(), ", ")
		if n := nearest(name, Normalisers()); n != "" {
			hint = fmt.Sprintf("did you mean %s? %s", n, hint)
		}
		b.problemf(i, fmt.Sprintf("normalize[%d]", j), hint, "unknown normaliser %q", name)
	}
	return chain
}

// typeHint lists the scorer types, naming the nearest one to typ.
func typeHint(typ string) string {
	names := Types()
	hint := "supported types: " + strings.Join(names, ", ")
	if n := nearest(typ, names); n != "" {
		hint = fmt.Sprintf("did you mean %s? %s", n, hint)
	}
	return hint
}

// nearest returns the candidate closest to s by edit distance when it is
// close enough to be a likely typo, else "".
func nearest(s string, candidates []string) string {
	if s == "" {
		return ""
	}
	low := strings.ToLower(s)
	for _, c := range candidates {
		if len(c) >= 3 && len(low) >= 3 && (strings.HasPrefix(low, c) || strings.HasPrefix(c, low)) {
			return c
		}
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= 2 || bestD <= len(s)/3 {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
