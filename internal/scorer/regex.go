package scorer

import (
	"context"
	"regexp"

	"github.com/assay-eval/assay/internal/spec"
)

// regexScorer passes when its pattern (Go RE2 syntax, as written) matches
// the parsed output; a JSON output is matched as compact JSON.
type regexScorer struct {
	name       string
	re         *regexp.Regexp
	allowEmpty bool
}

func buildRegex(b *builder, i int, sc *spec.Scorer) Scorer {
	if sc.Pattern == "" {
		b.problemf(i, "pattern", `e.g. pattern: '^(yes|no)$'`, "regex scorer needs pattern:")
		return nil
	}
	re, err := regexp.Compile(sc.Pattern)
	if err != nil {
		b.problemf(i, "pattern", "Go RE2 syntax: https://pkg.go.dev/regexp/syntax", "pattern is not a valid regular expression: %v", err)
		return nil
	}
	return &regexScorer{name: sc.Name, re: re, allowEmpty: sc.AllowEmpty}
}

func (s *regexScorer) Name() string { return s.name }

func (s *regexScorer) Score(_ context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, s.allowEmpty)
	if !ok {
		return v
	}
	text := outputText(out)
	if out == nil {
		text = ""
	}
	if s.re.MatchString(text) {
		return pass("matches `" + s.re.String() + "`")
	}
	return wrong("%s does not match `%s`", quote(text), s.re.String())
}
