package difficulty

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/assay-eval/assay/internal/runview"
)

// FromView builds a Set from a run view (a run from the store or a
// baseline file): its cases, their difficulty from the scale's tag (Source
// "tag"; NaN otherwise, and for a case without the tag; with another
// Source a Tag still fills Tags, for Fit's per-tier view), and per target
// the right answers and trials over the epochs of the primary scorer. A
// result the primary scorer did not score, a missing result and a failed
// call are missing (no trial), not wrong. The cases' weights (a view from
// the store holds them: the dataset's weight field, or a sample's design
// weights) become the set's mix, a case without one weighing 1; a view
// without any has nil Weights.
func FromView(v *runview.View, sc Scale) (*Set, error) {
	if v == nil {
		return nil, errors.New("no run to read")
	}
	// A view from the store says "run ID"; one from a baseline file names
	// the file.
	name, kind := v.Run.ID, KindRun
	if v.Source != "" && v.Source != v.Run.ID && v.Source != "run "+v.Run.ID {
		name, kind = v.Source, KindBaseline
	}
	if len(v.Cases) == 0 {
		return nil, fmt.Errorf("%s has no cases", name)
	}
	s := &Set{Name: name, Kind: kind, Scale: sc, Cases: make([]string, len(v.Cases))}
	for i, c := range v.Cases {
		s.Cases[i] = c.ID
	}
	s.Values = make([]float64, len(v.Cases))
	for i := range s.Values {
		s.Values[i] = math.NaN()
	}
	if sc.Source == SourceTag && sc.Tag == "" {
		return nil, errors.New("a difficulty from a tag needs the tag's name")
	}
	if sc.Tag != "" {
		values := make([]string, len(v.Cases))
		has := make([]bool, len(v.Cases))
		found := false
		for i := range v.Cases {
			values[i], has[i] = v.Tag(i, sc.Tag)
			found = found || has[i]
		}
		if !found {
			keys := v.TagKeys()
			valid := "it has no tags"
			if len(keys) > 0 {
				valid = "its tags are " + strings.Join(quoteAll(keys), ", ")
			}
			return nil, fmt.Errorf("%s: no case has the tag %q (%s)", name, sc.Tag, valid)
		}
		s.Tags = values
		if sc.Source == SourceTag {
			vals, err := TagValues(sc.Tag, s.Cases, values, has, sc.Levels)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			s.Values = vals
		}
	}
	for i := range v.Cases {
		if w := v.Weight(i); w != nil {
			if s.Weights == nil {
				s.Weights = make([]float64, len(v.Cases))
				for k := range s.Weights {
					s.Weights[k] = 1
				}
			}
			s.Weights[i] = *w
		}
	}
	if v.Primary == "" {
		return s, nil
	}
	epochs := max(v.Epochs, 1)
	for _, t := range v.Targets {
		pass := t.Pass[v.Primary]
		tr := TargetResults{Name: t.Name, Right: make([]int32, len(v.Cases)), Trials: make([]int32, len(v.Cases))}
		for i := range v.Cases {
			for e := range epochs {
				j := i*epochs + e
				if j >= len(pass) || pass[j] < 0 || !t.Behaved(j) {
					continue
				}
				tr.Trials[i]++
				if pass[j] == 1 {
					tr.Right[i]++
				}
			}
		}
		s.Targets = append(s.Targets, tr)
	}
	return s, nil
}

// FromTags builds a Set without results (a dataset file's cases) from each
// case's ID and its value of the scale's tag (has[i] false: none, unknown
// difficulty). kind is KindDataset for a dataset file.
func FromTags(name, kind string, ids, values []string, has []bool, sc Scale) (*Set, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s has no cases", name)
	}
	if len(values) != len(ids) || (has != nil && len(has) != len(ids)) {
		return nil, fmt.Errorf("%s: %d case IDs but %d tag values", name, len(ids), len(values))
	}
	if sc.Tag == "" {
		return nil, fmt.Errorf("%s: a set without results needs a difficulty tag", name)
	}
	vals, err := TagValues(sc.Tag, ids, values, has, sc.Levels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if allNaN(vals) {
		return nil, fmt.Errorf("%s: no case has a value of the tag %q", name, sc.Tag)
	}
	sc.Source = SourceTag
	tags := make([]string, len(ids))
	for i := range ids {
		if has == nil || has[i] {
			tags[i] = values[i]
		}
	}
	return &Set{Name: name, Kind: kind, Scale: sc, Cases: append([]string(nil), ids...), Values: vals, Tags: tags}, nil
}

func allNaN(xs []float64) bool {
	for _, x := range xs {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}
