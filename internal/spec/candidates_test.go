package spec

import (
	"slices"
	"testing"
)

// The candidates are the spec's list when it has one, else every target no
// judge scorer grades with; a pairwise judge's baseline stays a candidate.
func TestCandidateNames(t *testing.T) {
	targets := []Target{{Name: "a"}, {Name: "base"}, {Name: "grader"}, {Name: "grader2"}}
	for _, tc := range []struct {
		name       string
		scorers    []Scorer
		candidates []string
		want       []string
		judges     []string
	}{
		{"no judge: every target", []Scorer{{Type: "equals"}}, nil, []string{"a", "base", "grader", "grader2"}, nil},
		{"a judge is not a candidate", []Scorer{{Type: "judge", Target: "grader"}}, nil, []string{"a", "base", "grader2"}, []string{"grader"}},
		{"a pairwise baseline is", []Scorer{{Type: "judge", Mode: "pairwise", Target: "grader2", Baseline: "base"}, {Type: "judge", Target: "grader"}},
			nil, []string{"a", "base"}, []string{"grader", "grader2"}},
		{"the list decides, a judge included", []Scorer{{Type: "judge", Target: "grader"}}, []string{"grader", "a"}, []string{"grader", "a"}, []string{"grader"}},
		{"a target named only by another field is a candidate", []Scorer{{Type: "equals", Target: "grader"}}, nil, []string{"a", "base", "grader", "grader2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Spec{Targets: targets, Scorers: tc.scorers, Candidates: tc.candidates}
			if got := s.CandidateNames(); !slices.Equal(got, tc.want) {
				t.Errorf("CandidateNames = %q, want %q", got, tc.want)
			}
			if got := s.JudgeNames(); !slices.Equal(got, tc.judges) {
				t.Errorf("JudgeNames = %q, want %q", got, tc.judges)
			}
		})
	}
}
