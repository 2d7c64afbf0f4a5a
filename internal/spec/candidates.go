package spec

import (
	"fmt"
	"slices"
	"strings"
)

// JudgeNames are the targets the spec's judge scorers grade with, in target
// order.
func (s *Spec) JudgeNames() []string {
	var out []string
	for _, t := range s.Targets {
		if slices.ContainsFunc(s.Scorers, func(sc Scorer) bool { return sc.Type == "judge" && sc.Target == t.Name }) {
			out = append(out, t.Name)
		}
	}
	return out
}

// CandidateNames are the targets under test, the ones a run calls by
// default, ranks and compares: the spec's candidates: list when it is set,
// else every target that no judge scorer grades with. A target that is
// only a judge grades the candidates; it is not one of them. A pairwise
// judge's baseline is a candidate (its outputs are what the others are
// compared with).
func (s *Spec) CandidateNames() []string {
	if len(s.Candidates) > 0 {
		return slices.Clone(s.Candidates)
	}
	judges := s.JudgeNames()
	var out []string
	for _, t := range s.Targets {
		if !slices.Contains(judges, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// checkCandidates checks the candidates: list: at least one name, each a
// defined target, none twice.
func (v *validator) checkCandidates() {
	s := v.s
	if len(s.Candidates) == 0 {
		if v.written("candidates") {
			v.at("candidates", "name the targets under test, or drop candidates: to test every target that is not a judge", "candidates must list at least one target")
		}
		return
	}
	names := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		names[i] = t.Name
	}
	for i, c := range s.Candidates {
		p := fmt.Sprintf("candidates[%d]", i)
		switch {
		case !slices.Contains(names, c):
			hint := "defined targets: " + strings.Join(names, ", ")
			if near := nearest(c, names); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
			v.at(p, hint, "candidates: no target named %s", shortQuote(c))
		case slices.Contains(s.Candidates[:i], c):
			v.at(p, "list each candidate once", "candidates: %s is listed twice", shortQuote(c))
		}
	}
}

// checkJudgesOnly reports a spec whose every target is a judge and that
// names no candidates: a run would have nothing to test.
func (v *validator) checkJudgesOnly() {
	s := v.s
	if len(s.Candidates) > 0 || len(s.Targets) == 0 || len(s.CandidateNames()) > 0 {
		return
	}
	v.at("targets", "list the targets under test in candidates: (a judge may be one), or add a target that is not a judge",
		"every target is a judge (%s): there is no candidate to test", strings.Join(s.JudgeNames(), ", "))
}
