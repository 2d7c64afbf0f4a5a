package spec

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Difficulty is the difficulty: section: where a case's difficulty comes
// from (assay difficulty, assay mismatch, serve's rating page) and the
// answers to the divergence rubric's questionnaire (assay mismatch). Every
// key is optional.
type Difficulty struct {
	// Tag is the case tag holding a case's difficulty: a key of
	// dataset.tags, or a dataset field of that name.
	Tag string `yaml:"tag" json:"tag,omitempty"`
	// Levels orders a non-numeric tag's values, easiest first (they map to
	// 0, 1, 2, …); a numeric tag needs none.
	Levels []string `yaml:"levels" json:"levels,omitempty"`
	// Rubric answers what assay cannot compute about a benchmark against
	// this workload.
	Rubric *Rubric `yaml:"rubric" json:"rubric,omitempty"`
}

// Rubric answers what assay cannot compute about a benchmark against this
// workload: the decision's stakes and the domain's distance.
type Rubric struct {
	Stakes *RubricAnswer `yaml:"stakes" json:"stakes,omitempty"`
	Domain *RubricAnswer `yaml:"domain" json:"domain,omitempty"`
}

// RubricAnswer is one answer of the questionnaire: a rating and why.
type RubricAnswer struct {
	Rating string `yaml:"rating" json:"rating"` // "low" or "high"
	Why    string `yaml:"why" json:"why"`
}

// RubricRatings are the ratings a questionnaire answer may give.
var RubricRatings = []string{"low", "high"}

// Bounds of the difficulty: section.
const (
	MaxDifficultyLevels = 100
	MaxDifficultyLevel  = 200 // characters of one level
	MaxRubricWhy        = 2000
)

// checkDifficulty checks the difficulty: section: the tag's name, the
// levels (none empty, none twice) and the questionnaire's answers.
func (v *validator) checkDifficulty() {
	d := v.s.Difficulty
	if d == nil {
		return
	}
	if v.written("difficulty.tag") {
		switch t := d.Tag; {
		case strings.TrimSpace(t) == "":
			v.at("difficulty.tag", "the name of a case tag (a key of dataset.tags) or of a dataset field, such as tier", "difficulty.tag is empty")
		case !utf8.ValidString(t) || strings.ContainsFunc(t, unicode.IsControl):
			v.at("difficulty.tag", "the name of a case tag (a key of dataset.tags) or of a dataset field, such as tier", "difficulty.tag %s is not a valid name", shortQuote(t))
		}
	}
	if len(d.Levels) > 0 && d.Tag == "" {
		v.at("difficulty.levels", "give difficulty.tag, the tag whose values these levels order", "difficulty.levels is given without difficulty.tag")
	}
	if len(d.Levels) > MaxDifficultyLevels {
		v.at("difficulty.levels", fmt.Sprintf("at most %d levels", MaxDifficultyLevels), "difficulty.levels has %d levels", len(d.Levels))
	}
	seen := map[string]int{}
	for i, l := range d.Levels {
		key := fmt.Sprintf("difficulty.levels[%d]", i)
		switch {
		case strings.TrimSpace(l) == "":
			v.at(key, "a value of the tag, such as hard; levels are listed easiest first", "difficulty.levels[%d] is empty", i)
			continue
		case len(l) > MaxDifficultyLevel || !utf8.ValidString(l):
			v.at(key, fmt.Sprintf("a value of the tag, valid UTF-8, at most %d characters", MaxDifficultyLevel), "difficulty.levels[%d] is not a valid level", i)
			continue
		}
		if first, dup := seen[l]; dup {
			v.at(key, "list each level once, easiest first", "level %s is listed twice (first at difficulty.levels[%d])", shortQuote(l), first)
			continue
		}
		seen[l] = i
	}
	if r := d.Rubric; r != nil {
		for _, a := range []struct {
			key string
			ans *RubricAnswer
		}{{"stakes", r.Stakes}, {"domain", r.Domain}} {
			if a.ans == nil {
				continue
			}
			key := "difficulty.rubric." + a.key
			switch {
			case a.ans.Rating == "":
				v.at(key+".rating", "low or high", "%s.rating is missing", key)
			case a.ans.Rating != "low" && a.ans.Rating != "high":
				v.at(key+".rating", "low or high", "%s.rating must be low or high, got %s", key, shortQuote(a.ans.Rating))
			}
			switch {
			case strings.TrimSpace(a.ans.Why) == "":
				v.at(key+".why", "a sentence saying why, shown in the report beside the rating", "%s.why is missing: a rating needs its reason", key)
			case len(a.ans.Why) > MaxRubricWhy || !utf8.ValidString(a.ans.Why):
				v.at(key+".why", fmt.Sprintf("valid UTF-8, at most %d characters", MaxRubricWhy), "%s.why is not valid text of at most %d characters", key, MaxRubricWhy)
			}
		}
	}
}
