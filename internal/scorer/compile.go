package scorer

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// Reads says what part of a result a scorer type judges; it decides which
// fail-closed gates apply before the scorer runs, and which of selftest's
// modes differ for it.
type Reads string

const (
	ReadsParsed Reads = "parsed" // the parsed output: parse failures fail it
	ReadsRaw    Reads = "raw"    // the raw text: parse failures do not matter
	ReadsCall   Reads = "call"   // the call (latency, cost, length): refusal does not decide it
	// ReadsToolCalls: the tool calls the model made (Result.ToolCalls):
	// empty text, the parser and refusal wording beside a call do not
	// decide it.
	ReadsToolCalls Reads = "tool_calls"
)

// reads is Reads inside the package.
type reads = Reads

const (
	readsParsed = ReadsParsed
	readsRaw    = ReadsRaw
	readsMeta   = ReadsCall
	readsTools  = ReadsToolCalls
)

// Role says what a scorer type measures: correctness compares the answer
// with the case's; form checks shape, length or banned words; call checks
// the call's latency or cost. Checks of form and of the call may rightly
// pass junk (selftest reads it).
type Role string

const (
	RoleCorrectness Role = "correctness"
	RoleForm        Role = "form"
	RoleCall        Role = "call"
)

// TypeMeta describes a scorer type to what reasons about scorers without
// running them: selftest, validate and the judge warnings read it instead
// of keeping their own lists.
type TypeMeta struct {
	Type string
	// Reads is what the scorer judges: the parsed output, the raw text or
	// the call.
	Reads Reads
	// NeedsExpected: the scorer compares with the case's expected value;
	// a case without one fails loud.
	NeedsExpected bool
	// Fields says whether the scorer reads paths inside a JSON output
	// (and so needs output.format json).
	Fields FieldUse
	// Judge: the scorer calls a model (a judge target) to grade.
	Judge bool
	Role  Role
	// Labels: the scorer's value/values are answer labels (selftest's
	// label null models answer with them).
	Labels bool
	// Params are the keys it takes besides the common ones.
	Params []string
}

// FieldUse says whether a scorer type reads paths inside a JSON output.
type FieldUse string

const (
	FieldsNever  FieldUse = ""
	FieldsAlways FieldUse = "always"
	FieldsIfSet  FieldUse = "with field" // only when its field: is set
)

// typeInfo is one built-in scorer type: its metadata and how it is built.
type typeInfo struct {
	TypeMeta
	allowEmpty bool // allow_empty is meaningful
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

// Metas describe every scorer type, sorted by type.
func Metas() []TypeMeta {
	ts := scorerTypes()
	out := make([]TypeMeta, 0, len(ts))
	for _, n := range Types() {
		m := ts[n].TypeMeta
		m.Params = slices.Clone(m.Params)
		out = append(out, m)
	}
	return out
}

// Meta describes scorer type typ; false when there is no such type.
func Meta(typ string) (TypeMeta, bool) {
	info, ok := scorerTypes()[typ]
	if !ok {
		return TypeMeta{}, false
	}
	m := info.TypeMeta
	m.Params = slices.Clone(m.Params)
	return m, true
}

// scorerTypes is the one table of scorer types.
func scorerTypes() map[string]typeInfo {
	t := func(typ string, r Reads, role Role, params ...string) TypeMeta {
		return TypeMeta{Type: typ, Reads: r, Role: role, Params: params}
	}
	expected := func(m TypeMeta) TypeMeta { m.NeedsExpected = true; return m }
	labels := func(m TypeMeta) TypeMeta { m.Labels = true; return m }
	judge := func(m TypeMeta) TypeMeta { m.Judge = true; return m }
	fields := func(f FieldUse, m TypeMeta) TypeMeta { m.Fields = f; return m }
	return map[string]typeInfo{
		"equals":          {TypeMeta: expected(t("equals", ReadsParsed, RoleCorrectness, "normalize")), allowEmpty: true, build: buildEquals},
		"contains":        {TypeMeta: labels(t("contains", ReadsRaw, RoleCorrectness, "value", "values", "normalize")), build: buildContains},
		"not_contains":    {TypeMeta: t("not_contains", ReadsRaw, RoleForm, "value", "values", "normalize"), allowEmpty: true, build: buildNotContains},
		"regex":           {TypeMeta: t("regex", ReadsParsed, RoleForm, "pattern"), allowEmpty: true, build: buildRegex},
		"is_json":         {TypeMeta: t("is_json", ReadsRaw, RoleForm), build: buildIsJSON},
		"json_schema":     {TypeMeta: fields(FieldsAlways, t("json_schema", ReadsParsed, RoleForm, "schema")), allowEmpty: true, build: buildJSONSchema},
		"required_fields": {TypeMeta: fields(FieldsAlways, t("required_fields", ReadsParsed, RoleForm, "fields")), build: buildRequiredFields},
		"field_equals":    {TypeMeta: fields(FieldsAlways, expected(t("field_equals", ReadsParsed, RoleCorrectness, "field", "fields", "normalize", "tolerance", "relative"))), build: buildFieldEquals},
		"number":          {TypeMeta: fields(FieldsIfSet, expected(t("number", ReadsParsed, RoleCorrectness, "tolerance", "relative", "field"))), build: buildNumber},
		"similarity":      {TypeMeta: fields(FieldsIfSet, expected(t("similarity", ReadsParsed, RoleCorrectness, "method", "threshold", "field", "normalize"))), build: buildSimilarity},
		"one_of":          {TypeMeta: labels(t("one_of", ReadsParsed, RoleForm, "values", "normalize")), allowEmpty: true, build: buildOneOf},
		"max_length":      {TypeMeta: t("max_length", ReadsCall, RoleForm, "max"), allowEmpty: true, build: buildMaxLength},
		"latency":         {TypeMeta: t("latency", ReadsCall, RoleCall, "max"), allowEmpty: true, build: buildLatency},
		"cost":            {TypeMeta: t("cost", ReadsCall, RoleCall, "max"), allowEmpty: true, build: buildCost},
		"cel":             {TypeMeta: t("cel", ReadsParsed, RoleCorrectness, "expr"), allowEmpty: true, build: buildCEL},
		"judge":           {TypeMeta: judge(t("judge", ReadsParsed, RoleCorrectness, "target", "rubric", "mode", "baseline", "reveal_target", "threshold")), allowEmpty: true, build: buildJudge},
		"tool_call":       {TypeMeta: expected(t("tool_call", ReadsToolCalls, RoleCorrectness, "tool", "fields", "normalize", "tolerance", "relative", "schema")), build: buildToolCall},
		"tool_calls":      {TypeMeta: expected(t("tool_calls", ReadsToolCalls, RoleCorrectness, "match", "fields", "normalize", "tolerance", "relative")), build: buildToolCalls},
		"no_tool_call":    {TypeMeta: t("no_tool_call", ReadsToolCalls, RoleCorrectness), allowEmpty: true, build: buildNoToolCall},
	}
}

// readsJSONPaths reports whether a scorer reads paths inside a JSON
// output, and so needs output.format json.
func readsJSONPaths(sc *spec.Scorer) bool {
	m, _ := Meta(sc.Type)
	return m.Fields == FieldsAlways || m.Fields == FieldsIfSet && sc.Field != ""
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
			reads:      info.Reads,
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
	// tools are the spec's tools' compiled parameters, by name (nil until
	// a tool scorer asks: toolSchemas).
	tools map[string]*jsonschema.Schema
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
		"tool":          sc.Tool != "",
		"match":         sc.Match != "",
	}
	allowed := map[string]bool{}
	for _, p := range info.Params {
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
		if len(info.Params) > 0 {
			hint = fmt.Sprintf("%s takes %s", sc.Type, strings.Join(info.Params, ", "))
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
