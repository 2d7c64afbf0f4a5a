package scorer

import (
	"context"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// requiredFields passes when every path is present in the JSON output and
// not empty (not null, a blank string, {} or []). Zero and false count as
// present values.
type requiredFields struct {
	name  string
	paths []jsonPath
}

func buildRequiredFields(b *builder, i int, sc *spec.Scorer) Scorer {
	if len(sc.Fields) == 0 {
		b.problemf(i, "fields", "e.g. fields: [team, priority, customer.id]", "required_fields scorer needs fields:")
		return nil
	}
	s := &requiredFields{name: sc.Name}
	for j, f := range sc.Fields {
		p, err := parseJSONPath(f)
		if err != nil {
			b.problemf(i, fmt.Sprintf("fields[%d]", j), "", "%v", err)
			continue
		}
		s.paths = append(s.paths, p)
	}
	if len(s.paths) != len(sc.Fields) {
		return nil
	}
	return s
}

func (s *requiredFields) Name() string { return s.name }

func (s *requiredFields) Score(_ context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, false)
	if !ok {
		return v
	}
	var missing, blank []string
	for _, p := range s.paths {
		val, found := p.lookup(out)
		switch {
		case !found:
			missing = append(missing, p.String())
		case isEmptyValue(val):
			blank = append(blank, p.String())
		}
	}
	if len(missing) == 0 && len(blank) == 0 {
		return pass("all required fields present")
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(blank) > 0 {
		parts = append(parts, "empty "+strings.Join(blank, ", "))
	}
	v = loud(KindInvalidFormat, "%s", strings.Join(parts, "; "))
	v.Value = float64(len(s.paths)-len(missing)-len(blank)) / float64(len(s.paths))
	return v
}
