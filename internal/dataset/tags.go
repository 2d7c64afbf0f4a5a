package dataset

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/assay-eval/assay/internal/celbound"
	"github.com/assay-eval/assay/internal/spec"
)

// celCostLimit bounds the work one tag expression may do on one case.
const celCostLimit = 1_000_000

// tagger computes one tag: from a field, or from a CEL expression.
type tagger struct {
	key   string
	field string      // set when the tag is a plain field
	prg   cel.Program // set when it is an expression
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// isField reports whether a tag expression names a field rather than being
// a CEL expression: a bare identifier (other than a CEL literal), or — for
// CSV, whose headers may hold spaces — exactly one of the header's names.
func isField(expr string, header []string) bool {
	switch expr {
	case "true", "false", "null":
		return false
	}
	if identRE.MatchString(expr) {
		return true
	}
	for _, h := range header {
		if h == expr {
			return true
		}
	}
	return false
}

// newCELEnv declares `case` as a map of the row's fields, with the standard
// strings, math and lists extensions.
// Replace, join, format and split refuse to build over celbound.MaxString bytes.
func newCELEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("case", cel.MapType(cel.StringType, cel.DynType)),
		ext.Strings(),
		ext.Math(),
		ext.Lists(ext.ListsMaxRangeSize(10000)),
	)
	if err != nil {
		return nil, err
	}
	return celbound.Strings(env, celbound.MaxString)
}

// compileTags builds the taggers; an expression that does not compile is a
// problem located at dataset.tags.KEY in the spec.
func compileTags(sp *spec.Spec, header []string) ([]tagger, spec.Problems) {
	var out []tagger
	var probs spec.Problems
	var env *cel.Env
	for _, t := range sp.Dataset.Tags {
		path := "dataset.tags." + t.Key
		expr := strings.TrimSpace(t.Expr)
		if isField(expr, header) {
			out = append(out, tagger{key: t.Key, field: expr})
			continue
		}
		if env == nil {
			var err error
			if env, err = newCELEnv(); err != nil {
				probs = append(probs, sp.Problemf(path, "", "cannot set up CEL: %v", err))
				return nil, probs
			}
		}
		ast, iss := env.Compile(expr)
		if iss != nil && iss.Err() != nil {
			probs = append(probs, sp.Problemf(path, celHint(iss.Errors()), "%s does not compile: %s", path, CELMessage(iss.Errors())))
			continue
		}
		prg, err := env.Program(ast, cel.CostLimit(celCostLimit))
		if err != nil {
			probs = append(probs, sp.Problemf(path, "", "%s: %v", path, err))
			continue
		}
		out = append(out, tagger{key: t.Key, prg: prg})
	}
	return out, probs
}

// CELMessage renders CEL compile errors as one line: the first error with
// its character position, and how many more there are. Problems are one
// line each, so CEL's multi-line caret display is not used.
func CELMessage(errs []*cel.Error) string {
	if len(errs) == 0 {
		return "invalid expression"
	}
	e := errs[0]
	msg := e.Message
	if e.Location != nil && e.Location.Line() > 0 {
		msg = fmt.Sprintf("%s (at character %d)", msg, e.Location.Column()+1)
	}
	if len(errs) > 1 {
		msg += fmt.Sprintf(" and %d more", len(errs)-1)
	}
	return msg
}

func celHint(errs []*cel.Error) string {
	for _, e := range errs {
		if strings.Contains(e.Message, "undeclared reference") {
			return `fields are under case, e.g. case.answer or case["my field"]`
		}
	}
	return "a tag is a field name or a CEL expression over case; the strings, math and lists extensions are available"
}

// eval computes the tag for a row whose values are already plain.
func (t *tagger) eval(vars map[string]any) (string, bool, string) {
	if t.prg == nil {
		v, ok := vars[t.field]
		if !ok || v == nil {
			return "", false, ""
		}
		return Stringify(v), true, ""
	}
	out, _, err := t.prg.Eval(map[string]any{"case": vars})
	if err != nil {
		return "", false, err.Error()
	}
	if _, isNull := out.(types.Null); isNull {
		return "", false, ""
	}
	s, ok := celString(out)
	if !ok {
		return "", false, fmt.Sprintf("gives a %s; a tag must be a string, number or boolean", out.Type().TypeName())
	}
	return s, true, ""
}

func celString(v ref.Val) (string, bool) {
	switch x := v.(type) {
	case types.String:
		return string(x), true
	case types.Int:
		return strconv.FormatInt(int64(x), 10), true
	case types.Uint:
		return strconv.FormatUint(uint64(x), 10), true
	case types.Double:
		return Stringify(float64(x)), true
	case types.Bool:
		return strconv.FormatBool(bool(x)), true
	}
	return "", false
}

// tagFailures gathers the evaluation errors of tag expressions over a whole
// dataset: an expression that fails on one case usually fails on many (a
// field most rows lack), and one problem per tag, with how many cases it
// hit and where the first is, says it better than a screenful of copies.
type tagFailures struct {
	order []string
	by    map[string]*tagFailure
}

type tagFailure struct {
	first spec.Problem // at the first case it failed on
	cases int
}

func (f *tagFailures) add(key string, p spec.Problem) {
	if f.by == nil {
		f.by = map[string]*tagFailure{}
	}
	tf, ok := f.by[key]
	if !ok {
		tf = &tagFailure{first: p}
		f.by[key] = tf
		f.order = append(f.order, key)
	}
	tf.cases++
}

// problems is one problem per failing tag, in the order they first failed,
// located at the first case.
func (f *tagFailures) problems() []spec.Problem {
	var out []spec.Problem
	for _, key := range f.order {
		tf := f.by[key]
		p := tf.first
		if tf.cases > 1 {
			p.Msg += fmt.Sprintf(" (on %d cases; this is the first)", tf.cases)
		}
		out = append(out, p)
	}
	return out
}
