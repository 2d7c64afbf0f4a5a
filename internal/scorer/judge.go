package scorer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// judgeModes are the modes a judge scorer accepts.
func judgeModes() []string { return []string{"single", "pairwise"} }

// buildJudge checks a judge scorer's configuration and builds it with
// Options.Judge; without one it builds a placeholder that fails every result
// with a loud judge_error, so a spec with a judge never scores as passing
// before the judge exists.
func buildJudge(b *builder, i int, sc *spec.Scorer) Scorer {
	ok := true
	if sc.Target == "" {
		b.problemf(i, "target", "name one of the spec's targets to grade with", "judge scorer needs target:")
		ok = false
	} else if !slices.ContainsFunc(b.sp.Targets, func(t spec.Target) bool { return t.Name == sc.Target }) {
		names := make([]string, len(b.sp.Targets))
		for j, t := range b.sp.Targets {
			names[j] = t.Name
		}
		hint := "defined targets: " + strings.Join(names, ", ")
		if n := nearest(sc.Target, names); n != "" {
			hint = fmt.Sprintf("did you mean %s? %s", n, hint)
		}
		b.problemf(i, "target", hint, "judge scorer: target %q is not defined", sc.Target)
		ok = false
	}
	if sc.Mode != "" && !slices.Contains(judgeModes(), sc.Mode) {
		b.problemf(i, "mode", "mode is single or pairwise", "unknown judge mode %q", sc.Mode)
		ok = false
	}
	if !ok {
		return nil
	}
	if b.opts.Judge != nil {
		s, err := b.opts.Judge(b.sp, i)
		if err != nil {
			b.problemf(i, "", "", "judge scorer: %v", err)
			return nil
		}
		return s
	}
	return &judgePlaceholder{name: sc.Name}
}

// judgePlaceholder stands in for the judge until it is wired in.
type judgePlaceholder struct{ name string }

func (s *judgePlaceholder) Name() string { return s.name }

func (s *judgePlaceholder) Score(context.Context, *Input) Verdict {
	return loud(KindJudgeError, "judge not implemented")
}
